# unpack.sh - Sourced by the GPU machine's scripts (run.sh, focus.sh) from
# the repository root: $out is where output files go ($OUT when set, which
# the device tool brings back), and the packed build is unpacked to
# /tmp/tilejit-gpu/tilejit, which becomes the working directory.
out=${OUT:-/tmp/tilejit-out}
mkdir -p "$out"
work=/tmp/tilejit-gpu && rm -rf "$work" && mkdir -p "$work"
tar -C "$work" -xzf pack/tilejit.tar.gz
cd "$work/tilejit"
