#!/usr/bin/env bash
# focus.sh - On the GPU machine, within one short device call: each op of
# $TEST_OPS (in order) through its GPU cases ([ops]~[big]) until $TEST_S
# seconds have gone, a line each, then `tilejit_bench --ops $BENCH_OPS`
# (limited to $BENCH_S seconds; BENCH_UNCHECKED=1 times the rows without
# their CPU references, which take most of a short budget at the biggest
# shapes). For a session with little device time left; tools/gpu/run.sh is
# the full check.
set -uo pipefail
cd "$(dirname "$0")/../.."
source tools/gpu/unpack.sh
all=$(bin/tilejit list | awk '/^[a-z]/{print $1}')
start=$SECONDS
for op in ${TEST_OPS//,/ }; do
  left=$(( ${TEST_S:-60} - (SECONDS - start) ))
  [ "$left" -le 1 ] && { echo "== $op: not run (out of time)"; continue; }
  skip=$(echo "$all" | grep -vx "$op" | paste -sd,)
  TILEJIT_TEST_SKIP_OPS=$skip timeout "$left" bin/tilejit_gpu_tests \
    '[ops]~[big]' --reporter compact >"$out/test-$op.log" 2>&1
  echo "== $op: exit $? in $(( SECONDS - start ))s;" \
    "$(grep -E 'Passed|Failed|passed|failed' "$out/test-$op.log" | grep -v warning | tail -1)"
  grep -E 'FAILED|failed:' "$out/test-$op.log" | head -5
done
[ -n "${BENCH_OPS:-}" ] || exit 0
unchecked=$([ "${BENCH_UNCHECKED:-0}" = 1 ] && echo --unchecked)
echo "== tilejit_bench --ops $BENCH_OPS $unchecked"
timeout "${BENCH_S:-60}" bin/tilejit_bench --ops "$BENCH_OPS" $unchecked 2>&1 | tee "$out/bench.log"
