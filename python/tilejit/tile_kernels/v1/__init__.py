"""TileKernels 1.0's API where 2.1 changed it incompatibly:
`import tilejit.tile_kernels.v1 as tile_kernels` for code written for 1.0.
Its quant module has 1.0's forms of the functions whose positional
arguments 2.1 reused (the SwiGLU per-token casts; x_block_size in position
of the sf-only and precomputed-sf casts); every other function is
tilejit.tile_kernels' (2.1's forms extend 1.0's)."""
from .. import config, engram, mhc, modeling, moe, transpose
from . import quant

__all__ = ["config", "engram", "mhc", "modeling", "moe", "quant",
           "transpose"]
