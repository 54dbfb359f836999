# unpack.sh - Sourced by the GPU machine's scripts (run.sh, focus.sh,
# sanitize_ops.sh) from the repository root: $out is where output files go
# ($OUT when set, which the device tool brings back), and the packed build is
# unpacked to /tmp/tilejit-gpu/tilejit, which becomes the working directory.
# A script called by one that unpacked already (TILEJIT_GPU_UNPACKED) reuses
# that copy.
out=${OUT:-/tmp/tilejit-out}
mkdir -p "$out"
work=/tmp/tilejit-gpu
if [ -z "${TILEJIT_GPU_UNPACKED:-}" ]; then
  rm -rf "$work" && mkdir -p "$work"
  tar -C "$work" -xzf pack/tilejit.tar.gz
  export TILEJIT_GPU_UNPACKED=1
fi
cd "$work/tilejit"
