#!/usr/bin/env bash
# pack.sh - On the CPU machine: pack what the GPU machine needs to run the GPU
# tests and the benchmarks into pack/tilejit.tar.gz (the GPU machine has no
# LLVM, no Debian packages and no network; the build is self-contained).
#
#   tools/gpu/pack.sh        # after ./dev.sh or cmake --build --preset default
set -euo pipefail
cd "$(dirname "$0")/../.."
build=build/default
[ -x "$build/bin/tilejit" ] || { echo "pack.sh: build first (./dev.sh)" >&2; exit 1; }
cmake --build --preset default --target tilejit tilejit-opt tilejit_unit_tests \
  tilejit_cache_probe tilejit_gpu_tests tilejit_bench tilejit_bench_layers >/dev/null

rm -rf pack && mkdir -p pack/tilejit/bin pack/tilejit/lib
cp "$build"/lib/libtilejit_*.so pack/tilejit/lib/
cp "$build"/bin/{tilejit,tilejit-opt,tilejit_unit_tests,tilejit_cache_probe,tilejit_gpu_tests,tilejit_bench,tilejit_bench_layers} pack/tilejit/bin/
strip --strip-unneeded pack/tilejit/lib/*.so pack/tilejit/bin/*
cp tools/gpu/CTestTestfile.cmake pack/tilejit/
# The Python module (tilejit._C, and tilejit._testing for the Python GPU
# tests, tests/python_gpu/) for the GPU machine's Python 3.12, built against
# this build; in pack/tilejit/python/tilejit beside the .py files. Left out,
# saying so, without a Python >= 3.12 here.
py=${TILEJIT_PYTHON:-$(tools/find_python.sh)}
if [ -n "$py" ]; then
  "$py" -c "import nanobind" 2>/dev/null || "$py" -m pip install -q nanobind
  w=build/gpu-python && rm -rf "$w"
  cmake --install "$build" --prefix "$w/prefix" >/dev/null
  cmake -S python -B "$w/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$PWD/$w/prefix" -DPython_EXECUTABLE="$py" \
    -DTILEJIT_PYTHON_TESTING=ON >/dev/null
  cmake --build "$w/build" >/dev/null
  cmake --install "$w/build" --prefix "$w/site" >/dev/null
  mkdir -p pack/tilejit/python
  cp -r "$w/site/tilejit" pack/tilejit/python/
  strip --strip-unneeded pack/tilejit/python/tilejit/*.so
  # pytest for the GPU machine's Python where it has none (python.sh puts
  # it on the path then): pure-Python wheels from PyPI, unpacked. Left out,
  # saying so, where PyPI cannot be reached.
  mkdir -p "$w/wheels" pack/tilejit/pytest
  if "$py" -m pip download -q -d "$w/wheels" --only-binary=:all: \
       --python-version 3.12 pytest >/dev/null 2>&1; then
    for whl in "$w"/wheels/*.whl; do
      "$py" -m zipfile -e "$whl" pack/tilejit/pytest
    done
  else
    echo "pack.sh: pytest could not be downloaded; python.sh needs the" \
         "GPU machine's own" >&2
  fi
else
  echo "pack.sh: no Python >= 3.12 here; the Python module is left out" >&2
fi
tar -C pack -czf pack/tilejit.tar.gz tilejit
rm -rf pack/tilejit
ls -l pack/tilejit.tar.gz
