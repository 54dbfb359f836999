#!/usr/bin/env bash
# stalls.sh - On the GPU machine: where one kernel's warps wait, instruction
# by instruction (ncu's warp-state sampling over one launch of `tilejit
# bench OP ARGS... --iters 1`, the cache off), summarised by stalls.py:
#
#   KERNEL=get_fused_mapping_place bash tools/gpu/stalls.sh get_fused_mapping
#   896 samples over 1800 instructions
#   wait 20%  long_sb 16%  short_sb 16%  drain 16%  selected 10% ...
#     278  24.3%   0.1%  wait             ACQBULK
#    1241  62.5%   2.5%  long_sb          ISETP.NE.AND P4, PT, R10, RZ, PT
#
# (the H100, session 59; ACQBULK is griddepcontrol.wait, PREEXIT
# launch_dependents; the columns: SASS index, running share, own share). KERNEL=regex picks the kernel (default: the op's
# name; the first launch that matches); TOP=n lists the n heaviest
# instructions instead of those over 1.5 %. The report and the CSV stay in
# $out (stalls.ncu-rep, stalls.csv). A kernel of a few microseconds gives a
# few hundred samples: read the shares, not single instructions.
set -uo pipefail
cd "$(dirname "$0")/../.."
here=$PWD
source tools/gpu/unpack.sh
op=${1:?usage: stalls.sh OP [tilejit bench arguments]}
shift
TILEJIT_CACHE=0 timeout "${PROFILE_S:-240}" ncu --section SourceCounters \
  --section WarpStateStats --import-source no -k "regex:${KERNEL:-$op}" -c 1 \
  -f -o "$out/stalls" bin/tilejit bench "$op" "$@" --iters 1 >"$out/stalls.log" 2>&1 ||
  { echo "stalls: ncu failed; its output:"; tail -20 "$out/stalls.log"; exit 1; }
ncu -i "$out/stalls.ncu-rep" --page source --csv --print-source sass \
  >"$out/stalls.csv" 2>&1 ||
  { echo "stalls: ncu -i failed; its output:"; tail -5 "$out/stalls.csv"; exit 1; }
python3 "$here/tools/gpu/stalls.py" "$out/stalls.csv" ${TOP:+--top "$TOP"}
