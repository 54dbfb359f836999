#!/usr/bin/env bash
# run.sh - On the GPU machine: unpack pack/tilejit.tar.gz, check that the
# binaries need no LLVM or CUDA library, run the GPU tests and the benchmarks.
# Output files go to $OUT when it is set (the device tool brings them back).
set -uo pipefail
cd "$(dirname "$0")/../.."
OLDPWD_REPO=$PWD
source tools/gpu/unpack.sh

echo "== machine"; nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
echo "== NEEDED of the shipped binaries"
for f in bin/tilejit bin/tilejit-opt lib/*.so; do
  echo "$f: $(readelf -d "$f" | awk '/NEEDED/{gsub(/[\[\]]/,"",$5); printf "%s ", $5}')"
done
echo "== tilejit --version"; bin/tilejit --version
# BIG=1 also runs TileKernels' full test grids (several minutes).
# One device call is at most 600 s and everything together takes longer:
# SKIP_TESTS=1 (with SANITIZERS=) runs the benchmarks alone; OPS=a,b limits
# them to those ops' cases (tilejit_bench --ops).
rc=0
if [ "${SKIP_TESTS:-0}" != 1 ]; then
echo "== ctest"; ctest --output-on-failure $([ "${BIG:-0}" = 1 ] || echo -LE big) 2>&1 | tee "$out/ctest.log"; rc=${PIPESTATUS[0]}
fi
# compute-sanitizer, one tool at a time, each reported on its own line:
# memcheck over all GPU tests (one process) but the sweeps over every f32
# ([exhaustive]: plain loads and stores, 2^32 of them), racecheck and synccheck over
# every op's GPU cases ([ops]; TileKernels' grids, [big], take too long under
# them) through tools/gpu/sanitize_ops.sh, one process per op, in parallel
# (in one process racecheck alone outlasts a device call).
# SANITIZERS="memcheck" (or "") runs fewer; SKIP_BENCH=1 stops after them.
# Known, both owned by the gemm rewrite of the pipelining issue: the WGMMA
# gemm dies with a launch failure under synccheck (left out, said so), and
# computes NaN under racecheck (its line says "failed", with 0 hazards).
for tool in ${SANITIZERS-memcheck racecheck synccheck}; do
  if [ "$tool" != memcheck ]; then
    (cd "$OLDPWD_REPO" && OUT=$out TOOLS=$tool bash tools/gpu/sanitize_ops.sh) || rc=1
    continue
  fi
  compute-sanitizer --tool memcheck --report-api-errors no --print-limit 20 \
    bin/tilejit_gpu_tests '~[big]~[exhaustive]' >"$out/memcheck.log" 2>&1
  echo "== compute-sanitizer memcheck (~[big]~[exhaustive]): exit $?;" \
    "$(grep -E 'ERROR SUMMARY' "$out/memcheck.log" | tail -1);" \
    "$(grep -E 'test cases?|tests? passed|No tests ran' "$out/memcheck.log" | tail -1)"
done
[ "${SKIP_BENCH:-0}" = 1 ] && exit $rc
echo "== benchmarks"; TILEJIT_BENCH_JSON="$out/bench.json" bin/tilejit_bench ${OPS:+--ops "$OPS"} 2>&1 | tee "$out/bench.log"; brc=${PIPESTATUS[0]}
# The chart of % of copy (python -m tilejit.bench), where the pack has the
# Python module (pack.sh) and the run wrote rows.
if [ -d python/tilejit ] && [ -s "$out/bench.json" ]; then
  PYTHONPATH=$PWD/python LD_LIBRARY_PATH=$PWD/lib python3 -m tilejit.bench \
    "$out/bench.json" "$out/chart.svg" || true
fi
[ -n "${OPS:-}" ] && exit $(( rc || brc ))
echo "== cuBLAS through torch, same run (the gemm roofline)"
python3 "$OLDPWD_REPO/tools/gpu/cublas.py" 2>&1 | tee "$out/cublas.log"
echo "== main job"; bin/tilejit bench batched_transpose --dtype bf16 --shape 8x4096x7168
exit $(( rc || brc ))
