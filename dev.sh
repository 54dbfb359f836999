#!/usr/bin/env bash
# dev.sh - Set up, build and run tilejit on a fresh Debian 12 machine.
#
#   ./dev.sh        install what is missing, build, run the main job: JIT-compile
#                   batched_transpose (bf16, 8x4096x7168) and print its PTX; with
#                   a GPU, also run it, check it against the CPU reference and
#                   report GB/s
#   ./dev.sh test   install what is missing, build, run the whole test suite
#   ./dev.sh sanitize  the CPU tests again, built with ASan + UBSan
#                   (build/sanitize; CI runs it after `test`)
#
# A second run skips what is installed and built already.
set -euo pipefail
cd "$(dirname "$0")"
mode=${1:-main}
case "$mode" in
  main|test|sanitize) ;;
  *) echo "dev.sh: unknown mode '$mode'; use './dev.sh', './dev.sh test' or" \
          "'./dev.sh sanitize'" >&2; exit 1 ;;
esac

packages=(cmake ninja-build g++ llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
          lld-22 libzstd-dev zlib1g-dev libxml2-dev libedit-dev catch2 libfmt-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "dev.sh: installing ${missing[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
if [ ! -f /usr/local/cuda/include/cuda.h ]; then
  echo "dev.sh: /usr/local/cuda/include/cuda.h not found; tilejit needs the CUDA 13 headers" \
       "(the driver itself is loaded at run time)" >&2
  exit 1
fi

# The conversion tests compare with an independent implementation (ml_dtypes).
if [ "$mode" != main ]; then
  python3 -c "import numpy, ml_dtypes" 2>/dev/null ||
    python3 -m pip install -q numpy ml_dtypes
fi

# The Python package's test (tests/python_package) builds the wheel with a
# Python >= 3.12: python3.12 or python3.13 on PATH, else pyenv's oldest 3.12+.
if [ "$mode" = test ]; then
  py=$(tools/find_python.sh)
  if [ -n "$py" ]; then
    # The wheel's build requirements (python/pyproject.toml; CMake >= 3.26
    # for the stable ABI, Debian 12 has 3.25), and NumPy for the tests'
    # DLPack arrays.
    "$py" -c "import nanobind, scikit_build_core, cmake, ninja, numpy" \
      2>/dev/null || "$py" -m pip install -q nanobind scikit-build-core \
      "cmake>=3.26" ninja numpy
    # torch for the package's torch tests (CPU only: meta tensors,
    # torch.compile tracing); PyPI's wheel brings CUDA's libraries (~4.6 GB
    # installed). TILEJIT_TEST_TORCH=0 leaves it out (the test says so).
    if [ "${TILEJIT_TEST_TORCH:-1}" != 0 ]; then
      "$py" -c "import torch" 2>/dev/null || "$py" -m pip install -q torch
    fi
    export TILEJIT_PYTHON="$py"
  fi
fi

if [ "$mode" = sanitize ]; then
  # tilejit's own code with AddressSanitizer and UndefinedBehaviorSanitizer
  # (LLVM/MLIR are Debian's uninstrumented libraries); every CPU test but
  # find_package and python_package (projects built without the sanitizers).
  [ -f build/sanitize/build.ninja ] || cmake --preset sanitize
  cmake --build --preset sanitize
  ctest --preset sanitize
  exit
fi

[ -f build/default/build.ninja ] || cmake --preset default
cmake --build --preset default

if [ "$mode" = test ]; then
  ctest --preset default
  exit
fi

bin=build/default/bin
"$bin/tilejit" --version
"$bin/tilejit" compile batched_transpose --dtype bf16 --shape 8x4096x7168 --dump ptx --timings
# On a machine with a GPU: run, check against the CPU reference, report GB/s.
rc=0
"$bin/tilejit" bench batched_transpose --dtype bf16 --shape 8x4096x7168 || rc=$?
if [ "$rc" -eq 77 ]; then
  echo "dev.sh: no GPU here, so the kernel was compiled but not run"
  rc=0
fi
exit "$rc"
