"""tile_kernels.modeling on tilejit: the layers as torch autograd Functions
over the bound ops: `engram` (TileKernels 2.1's Engram gate) and `mhc`
(TileKernels 1.0's functional mHC layer, removed in 2.1: mhc_pre, mhc_head,
expand_from_embedding and the autograd functions of mhc.ops, with 1.0's
gradient-sharing protocol). tilejit's C++ layers
(kernels/modeling/mhc_pre.h, mhc_head.h) compose the same ops."""
from . import engram, mhc

__all__ = ["engram", "mhc"]
