#!/usr/bin/env bash
# sweep_checks.sh - On the GPU machine, every correctness check in one
# device call, run side by side: every op's GPU cases and the other GPU
# tests (test_ops.sh, JOBS processes), memcheck over the GPU tests but the
# f32 sweeps (the op cases one a distinct set of kernels, the smallest:
# TILEJIT_TEST_DISTINCT_KERNELS; the whole set never finished within a
# call), racecheck of every op's cases (sanitize_ops.sh, the same, gemm
# included, SJOBS at once, OP_S seconds an op), and synccheck + racecheck
# of the gemm and pipeline tests. Each part is cut after L seconds (default
# 560) and prints its summary line; logs in $out/t (tests) and $out/s
# (sanitizers), memcheck.log in $out. Session 62 on an H100 (L=500): every
# part but memcheck finished except one test process and five ops'
# racecheck (the ops with minutes of CPU reference).
set -uo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
source tools/gpu/unpack.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$SECONDS
L=${L:-560}
mkdir -p "$out/t" "$out/s"
line() { grep -E "$2" "$1" | tail -1; }
( TILEJIT_TEST_DISTINCT_KERNELS=1 timeout "$L" compute-sanitizer \
    --tool memcheck --report-api-errors no \
    --print-limit 20 bin/tilejit_gpu_tests '~[big]~[exhaustive]' \
    >"$out/memcheck.log" 2>&1
  echo "== memcheck (~[big]~[exhaustive]): exit $? at $((SECONDS - t0)) s;" \
    "$(line "$out/memcheck.log" 'ERROR SUMMARY');" \
    "$(line "$out/memcheck.log" 'test cases?|tests? passed|No tests ran')"
) &
( for tool in synccheck racecheck; do
    log=$out/s/gemm-$tool.log
    timeout 200 compute-sanitizer --tool "$tool" --report-api-errors no \
      --print-limit 20 bin/tilejit_gpu_tests \
      '[gemm],[epilogue],[pipelined],[tma]' >"$log" 2>&1
    echo "== $tool [gemm],[epilogue],[pipelined],[tma]: exit $? at" \
      "$((SECONDS - t0)) s; $(line "$log" 'ERROR SUMMARY|RACECHECK SUMMARY');" \
      "$(line "$log" 'test cases?|tests? passed|No tests ran')"
  done
) &
( cd "$repo" && OUT=$out/s TOOLS=racecheck GEMM=1 JOBS=${SJOBS:-5} \
    OP_S=${OP_S:-150} timeout "$L" bash tools/gpu/sanitize_ops.sh \
    >/dev/null 2>&1
  echo "== racecheck of every op's cases: exit $? at $((SECONDS - t0)) s;" \
    "$(grep -c ': exit 0;' "$out/s/sanitize_ops.log") of" \
    "$(wc -l <"$out/s/sanitize_ops.log") ops exit 0"
  grep -v ': exit 0;' "$out/s/sanitize_ops.log" | head -20
  grep -h 'RACECHECK SUMMARY' "$out"/s/racecheck-*.log | sort | uniq -c
) &
( cd "$repo" && OUT=$out/t JOBS=${JOBS:-9} OP_S=$L bash tools/gpu/test_ops.sh
  echo "== test_ops exit $? at $((SECONDS - t0)) s"
) &
wait
cp "$out/s/sanitize_ops.log" "$out/" 2>/dev/null
echo "== all done at $((SECONDS - t0)) s"
