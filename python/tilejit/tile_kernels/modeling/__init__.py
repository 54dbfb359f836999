"""tile_kernels.modeling on tilejit: TileKernels 2.1's layers as torch
autograd Functions over the bound ops (`engram`: the Engram gate). 1.0's
`modeling.mhc` (removed in 2.1) has tilejit's C++ layers
(kernels/modeling/mhc_pre.h, mhc_head.h); its Python form is not bound."""
from . import engram

__all__ = ["engram"]
