#!/usr/bin/env bash
# run.sh - On the GPU machine: unpack pack/tilejit.tar.gz, check that the
# binaries need no LLVM or CUDA library, run the GPU tests and the benchmarks.
# Output files go to $OUT when it is set (the device tool brings them back).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/tilejit-out}
mkdir -p "$out"
work=/tmp/tilejit-gpu && rm -rf "$work" && mkdir -p "$work"
tar -C "$work" -xzf pack/tilejit.tar.gz
cd "$work/tilejit"

echo "== machine"; nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
echo "== NEEDED of the shipped binaries"
for f in bin/tilejit bin/tilejit-opt lib/*.so; do
  echo "$f: $(readelf -d "$f" | awk '/NEEDED/{gsub(/[\[\]]/,"",$5); printf "%s ", $5}')"
done
echo "== tilejit --version"; bin/tilejit --version
# BIG=1 also runs TileKernels' full test grids (several minutes).
echo "== ctest"; ctest --output-on-failure $([ "${BIG:-0}" = 1 ] || echo -LE big) 2>&1 | tee "$out/ctest.log"; rc=${PIPESTATUS[0]}
echo "== compute-sanitizer memcheck of the GPU tests"; 
compute-sanitizer --tool memcheck --report-api-errors no --print-limit 20 bin/tilejit_gpu_tests "~[big]" >"$out/memcheck.log" 2>&1
grep -E "=====|test cases" "$out/memcheck.log" | head -60
echo "== benchmarks"; bin/tilejit_bench 2>&1 | tee "$out/bench.log"; brc=${PIPESTATUS[0]}
echo "== main job"; bin/tilejit bench scale_copy --shape 8192x8192
exit $(( rc || brc ))
