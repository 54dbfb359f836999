"""TileKernels 1.0's API where 2.1 changed it incompatibly:
`import tilejit.tile_kernels.v1 as tile_kernels` for code written for 1.0.
Its quant module has 1.0's forms of the functions whose positional
arguments 2.1 reused (the SwiGLU per-token casts; x_block_size in position
of the sf-only and precomputed-sf casts); every other function is
tilejit.tile_kernels' (2.1's forms extend 1.0's)."""
import sys as _sys

from .. import config, engram, mhc, modeling, moe, transpose
from . import quant


def _alias_modules():
    """`from tilejit.tile_kernels.v1.moe import topk_gate` (1.0 code's
    `from tile_kernels.moe import ...` with the import changed) finds the
    shared modules under v1's name too, submodules included
    (v1.modeling.mhc.ops)."""
    parent = __name__.rsplit(".", 1)[0]  # tilejit.tile_kernels
    for shared in ("config", "engram", "mhc", "modeling", "moe",
                   "transpose"):
        prefix = f"{parent}.{shared}"
        for name, module in list(_sys.modules.items()):
            if name == prefix or name.startswith(prefix + "."):
                _sys.modules.setdefault(__name__ + name[len(parent):],
                                        module)


_alias_modules()

__all__ = ["config", "engram", "mhc", "modeling", "moe", "quant",
           "transpose"]
