#!/usr/bin/env bash
# test_ops.sh - On the GPU machine: every op's GPU cases ([ops]~[big]) in
# $JOBS processes at once (ops dealt round-robin; one process for all ops
# takes about 260 s), and beside them one process for every other GPU test
# (~[ops]~[big]: DSL, runtime, scale_copy). A line per process with its
# Catch2 summary; logs in $out/test-<n>.log. OPS=a,b tests those ops alone.
# Ops in $SOLO (default mhc_multilayer_recompute, whose ten-layer cases at
# 8192 x 4 x 8192 take minutes of CPU reference, and engram_gate_bwd, whose
# cases outlasted 500 s in a process with seven other ops on an H100 beside
# the sanitizers, session 62) get a process each.
# Exits 1 when any process fails.
set -uo pipefail
cd "$(dirname "$0")/../.."
source tools/gpu/unpack.sh
all=$(bin/tilejit list | awk '/^[a-z]/{print $1}')
ops=${OPS:+$(echo "${OPS//,/ }" | tr ' ' '\n')}
ops=${ops:-$all}
jobs=${JOBS:-4}
solo=$(echo "${SOLO-mhc_multilayer_recompute engram_gate_bwd}" | tr ', ' '\n\n' | grep -xF "$ops")
rest=$(echo "$ops" | grep -vxF "${solo:-@}")
summary() { grep -E 'test cases?|tests? passed|No tests ran' "$1" | tail -1; }
pids=()
groups=()
for ((g = 0; g < jobs; g++)); do
  groups+=("$(echo "$rest" | awk -v g=$g -v n=$jobs '(NR - 1) % n == g')")
done
for op in $solo; do groups+=("$op"); done
for ((g = 0; g < ${#groups[@]}; g++)); do
  mine=${groups[$g]}
  [ -n "$mine" ] || continue
  skip=$(echo "$all" | grep -vxF "$mine" | paste -sd,)
  ( TILEJIT_TEST_SKIP_OPS=$skip timeout "${OP_S:-500}" bin/tilejit_gpu_tests \
      '[ops]~[big]' --reporter compact >"$out/test-$g.log" 2>&1
    r=$?; echo "ops $(echo $mine | tr ' ' ','): exit $r; $(summary "$out/test-$g.log")"
    exit $r
  ) & pids+=($!)
done
if [ -z "${OPS:-}" ]; then
  ( timeout "${OP_S:-500}" bin/tilejit_gpu_tests '~[ops]~[big]' \
      --reporter compact >"$out/test-rest.log" 2>&1
    r=$?; echo "other GPU tests: exit $r; $(summary "$out/test-rest.log")"
    exit $r
  ) & pids+=($!)
fi
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
grep -hE 'FAILED|failed:' "$out"/test-*.log | head -20
exit $rc
