#!/usr/bin/env bash
# sweep_bench.sh - On the GPU machine, the acceptance figures in one device
# call: every op's benchmark rows unchecked (bench.json and bench.log in
# $out; the cases' checks are sweep_checks.sh's), cuBLAS at the gemm rows'
# shapes (same run), the gemm with a fused epilogue, the cold-compile
# table, the modeling layers, the routing chain through the Python package
# and batched_transpose through TMA pipelines; each part cut after its own
# limit. Session 63 on an H100: the bench's 147 rows ran past 300 s (cut in
# its gemm rows, which come last) and the rest took 124 s; so the bench has
# 400 s, and the cold-compile table (30 s was too short) runs beside the
# GPU-bound parts after it: about 520 s in all.
set -uo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
source tools/gpu/unpack.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm \
  --format=csv,noheader
t0=$SECONDS
echo "== tilejit_bench --unchecked"
TILEJIT_BENCH_JSON="$out/bench.json" timeout 400 stdbuf -oL bin/tilejit_bench \
  --unchecked >"$out/bench.log" 2>&1
echo "exit $? at $((SECONDS - t0)) s; $(grep -c . "$out/bench.log") lines"
# The cold-compile table (CPU only, single-threaded: about 45 s on a CI
# core) beside the GPU-bound parts that follow, printed at the end.
timeout 150 stdbuf -oL bin/tilejit_bench --compile >"$out/compile.log" 2>&1 &
compile=$!
echo "== cuBLAS (same run)"
timeout 60 python3 "$repo/tools/gpu/cublas.py" 2>&1 | tee "$out/cublas.log" |
  tail -20
echo "== fused gemm"; timeout 40 bin/tilejit_bench --fused-gemm 2>&1 | tail -12
echo "== layers"; timeout 60 bin/tilejit_bench_layers 2>&1 | tail -20
echo "== routing"
PYTHONPATH=$PWD/python LD_LIBRARY_PATH=$PWD/lib timeout 60 python3 \
  "$repo/tests/python_gpu/routing_pipeline.py" 2>&1 | tail -15
echo "== batched_transpose through TMA pipelines"
timeout 60 bin/tilejit_bench --tma-transpose 2>&1 | tail -12
wait "$compile"
echo "== cold compile (exit $?)"; tail -25 "$out/compile.log"
echo "== done at $((SECONDS - t0)) s"
