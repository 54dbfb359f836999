"""tile_kernels.modeling on tilejit: the autograd layers need the Engram and
mHC kernels' backward passes, which do not run yet."""
