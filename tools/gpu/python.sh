#!/usr/bin/env bash
# python.sh - On the GPU machine: the Python package's GPU checks with the
# machine's Python 3.12 and torch, on the module pack.sh built
# (pack/tilejit.tar.gz, tilejit/python): every op's GPU cases launched
# through tilejit.ops and checked against the CPU references
# (tests/python_gpu/test_ops_gpu.py, as JOBS scripts at once (default 4),
# the ops dealt among them, each preparing and checking its cases on its
# share of the cores; PYTEST=1 under pytest, one core; OPS=a,b those ops;
# SKIP_CASES=1 none), TileKernels' API in TileKernels' test layout
# (tests/python_gpu/tile_kernels/<module>/test_<op>.py, under pytest), then
# the host's cost of a call from Python (tests/python_gpu/host_overhead.py;
# SKIP_OVERHEAD=1 leaves it out). PYTEST=1: one pytest run over both, the
# cases prepared on every core ahead of the one running (its summary is the
# GPU machine's pytest summary). pytest: the machine's, else the pack's.
# Exits 1 when a check fails.
#
# Within one 600 s device call (an H100, session 57): PYTEST=1 over both no
# longer fits (1,544 of 4,613 tests in 450 s); the cases as scripts do,
# JOBS=11 (395 s, the ops in $SOLO, default engram_gate_bwd and
# mhc_multilayer_recompute whose CPU references take minutes, in a process
# each; SKIP_TREE=1 SKIP_OVERHEAD=1 leaves the rest to another call), and
# `PYTEST=1 SKIP_CASES=1` runs the tile_kernels tree (722 tests, 145 s) and
# the host costs in another call.
set -uo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
source tools/gpu/unpack.sh
[ -d python/tilejit ] || {
  echo "python.sh: the pack has no Python module (pack.sh found no" \
       "Python >= 3.12)" >&2
  exit 1
}
export PYTHONPATH=$PWD/python LD_LIBRARY_PATH=$PWD/lib
py=${PYTHON:-python3}
"$py" -c "import pytest" 2>/dev/null || PYTHONPATH=$PYTHONPATH:$PWD/pytest
rc=0
pytest() {
  # (tests/python_gpu/pytest.ini adds -p no:cacheprovider.)
  timeout -s INT -k 30 "${TEST_S:-400}" "$py" -m pytest -q \
    -o console_output_style=count "$@" > "$out/pytest.log" 2>&1
  local status=$?
  grep -E "^(FAILED|ERROR)" "$out/pytest.log" | head -30
  tail -1 "$out/pytest.log"
  return $status
}
if [ -n "${PYTEST:-}" ] && [ -z "${SKIP_CASES:-}" ]; then
  pytest "$repo/tests/python_gpu/tile_kernels" \
    "$repo/tests/python_gpu/test_ops_gpu.py" || rc=1
else
  if [ -z "${SKIP_CASES:-}" ]; then
    # JOBS processes (default 4), the ops dealt round-robin, the cores
    # shared.
    all=$(bin/tilejit list | awk '/^[a-z]/{print $1}')
    ops=${OPS:+$(echo "${OPS//,/ }" | tr ' ' '\n')}
    ops=${ops:-$all}
    jobs=${JOBS:-4}
    solo=$(echo "${SOLO-engram_gate_bwd mhc_multilayer_recompute}" |
           tr ', ' '\n\n' | grep -xF "$ops")
    rest=$(echo "$ops" | grep -vxF "${solo:-@}")
    groups=()
    for ((g = 0; g < jobs; g++)); do
      groups+=("$(echo "$rest" | awk -v g=$g -v n=$jobs '(NR - 1) % n == g' |
                  paste -sd,)")
    done
    for op in $solo; do groups+=("$op"); done
    procs=${#groups[@]}
    pids=()
    for ((g = 0; g < procs; g++)); do
      mine=${groups[$g]}
      [ -n "$mine" ] || continue
      TILEJIT_TEST_THREADS=$(( $(nproc) / procs > 0 ? $(nproc) / procs : 1 )) \
        timeout "${TEST_S:-400}" "$py" \
        "$repo/tests/python_gpu/test_ops_gpu.py" "$mine" \
        > "$out/python-cases-$g.log" 2>&1 & pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || rc=1; done
    grep -h "FAIL" "$out"/python-cases-*.log | head -30
    grep -h "python GPU cases" "$out"/python-cases-*.log
  fi
  [ -n "${SKIP_TREE:-}" ] ||
    pytest "$repo/tests/python_gpu/tile_kernels" || rc=1
fi
[ -n "${SKIP_OVERHEAD:-}" ] ||
  timeout 120 "$py" "$repo/tests/python_gpu/host_overhead.py" || rc=1
exit $rc
