#!/usr/bin/env bash
# sanitize_ops.sh - On the GPU machine: compute-sanitizer's racecheck and
# synccheck over every op's GPU cases ([ops]~[big]), one process per op, $JOBS
# of them at once (racecheck over all ops in one process takes longer than a
# device call). Each op gets a line with its SUMMARY; a per-op process is cut
# after $OP_S seconds and says so. TOOLS="racecheck" runs fewer tools.
# OPS=a,b checks those ops alone. Each op runs one case a distinct set of
# kernels, its smallest (TILEJIT_TEST_DISTINCT_KERNELS; hazards are a block's
# code's, fixed by its specialisation: racecheck of the largest cases of
# engram_gate_*, mhc_pre_norm_fn_* and mhc_multilayer_recompute ran past
# 150 s an op, sessions 62-67); DISTINCT=0 runs every case. Exits 1 when
# any op's line does not say exit 0.
# Known until session 50: the WGMMA gemm died with a launch failure under
# synccheck and computed NaN under racecheck (0 hazards reported), so both
# leave its op cases out and say so; GEMM=1 puts them back (its [gemm] and
# [epilogue] GPU tests run clean under all three tools on an H100 since its
# dynamic shared memory is declared .extern: docs/gpu-workflow.md).
set -uo pipefail
cd "$(dirname "$0")/../.."
source tools/gpu/unpack.sh
ops=$(bin/tilejit list | awk '/^[a-z]/{print $1}')
only=${OPS:+$(echo "${OPS//,/ }" | tr ' ' '\n')}
one() {  # tool op
  local tool=$1 op=$2 log="$out/$1-$2.log"
  local skip; skip=$(echo "$ops" | grep -vx "$op" | paste -sd,)
  TILEJIT_TEST_SKIP_OPS=$skip TILEJIT_TEST_DISTINCT_KERNELS=${DISTINCT:-1} \
    timeout "${OP_S:-240}" compute-sanitizer \
    --tool "$tool" --report-api-errors no --print-limit 20 \
    bin/tilejit_gpu_tests '[ops]~[big]' >"$log" 2>&1
  local rc=$?
  echo "$tool $op: exit $rc$([ $rc = 124 ] && echo ' (cut)');" \
    "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1);" \
    "$(grep -E 'test cases?|tests? passed|No tests ran' "$log" | tail -1)"
}
export -f one; export ops out
if [ "${GEMM:-0}" != 1 ]; then
  for tool in ${TOOLS-racecheck synccheck}; do
    echo "$tool gemm: left out (known until session 50: $([ "$tool" = synccheck ] && echo 'launch failure' || echo 'computes NaN'); GEMM=1 runs it)"
  done
fi
for tool in ${TOOLS-racecheck synccheck}; do
  for op in ${only:-$ops}; do
    [ "$op" = gemm ] && [ "${GEMM:-0}" != 1 ] && continue
    echo "$tool $op"
  done
done | xargs -P "${JOBS:-8}" -L1 bash -c 'one "$0" "$1"' | sort | tee "$out/sanitize_ops.log"
! grep -v ': exit 0;' "$out/sanitize_ops.log" | grep -q .
