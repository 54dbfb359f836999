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
  tilejit_cache_probe tilejit_gpu_tests tilejit_bench >/dev/null

rm -rf pack && mkdir -p pack/tilejit/bin pack/tilejit/lib
cp "$build"/lib/libtilejit_*.so pack/tilejit/lib/
cp "$build"/bin/{tilejit,tilejit-opt,tilejit_unit_tests,tilejit_cache_probe,tilejit_gpu_tests,tilejit_bench} pack/tilejit/bin/
strip --strip-unneeded pack/tilejit/lib/*.so pack/tilejit/bin/*
cp tools/gpu/CTestTestfile.cmake pack/tilejit/
tar -C pack -czf pack/tilejit.tar.gz tilejit
rm -rf pack/tilejit
ls -l pack/tilejit.tar.gz
