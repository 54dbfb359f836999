"""TileKernels' API on tilejit: `import tilejit.tile_kernels as tile_kernels`
where code imported `tile_kernels`. Modules as TileKernels lays them out
(quant, moe, engram, mhc, transpose, modeling, config), with its names,
signatures, defaults and returns; outputs allocated with torch on the
input's device, launched on the current torch CUDA stream. A function whose
kernel tilejit does not run yet raises NotImplementedError saying so.
torch is imported on the first call, not on import."""
from . import config, engram, mhc, modeling, moe, quant, transpose

__all__ = ["config", "engram", "mhc", "modeling", "moe", "quant",
           "transpose"]
