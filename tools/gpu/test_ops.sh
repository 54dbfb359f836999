#!/usr/bin/env bash
# test_ops.sh - On the GPU machine: every op's GPU cases ([ops]~[big]) in
# $JOBS processes at once (ops dealt round-robin; one process for all ops
# takes about 260 s), and beside them one process for every other GPU test
# (~[ops]~[big]: DSL, runtime, scale_copy). A line per process with its
# Catch2 summary; logs in $out/test-<n>.log. OPS=a,b tests those ops alone.
# Exits 1 when any process fails.
set -uo pipefail
cd "$(dirname "$0")/../.."
source tools/gpu/unpack.sh
all=$(bin/tilejit list | awk '/^[a-z]/{print $1}')
ops=${OPS:+$(echo "${OPS//,/ }" | tr ' ' '\n')}
ops=${ops:-$all}
jobs=${JOBS:-4}
summary() { grep -E 'test cases?|tests? passed|No tests ran' "$1" | tail -1; }
pids=()
for ((g = 0; g < jobs; g++)); do
  mine=$(echo "$ops" | awk -v g=$g -v n=$jobs '(NR - 1) % n == g')
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
