"""TileKernels' API on tilejit: `import tilejit.tile_kernels as tile_kernels`
where code imported `tile_kernels`. Modules as TileKernels lays them out
(quant, moe, engram, mhc, transform, transpose, modeling, config), with its
names, signatures, defaults and returns; outputs allocated with torch on
the input's device, launched on the current torch CUDA stream. A function whose
kernel tilejit does not run yet raises NotImplementedError saying so.
Where torch is installed it is imported here and the ops are registered as
torch custom ops (torch.ops.tilejit.<op>, what torch.compile traces: they
cannot be registered inside a trace); without torch the package imports
and validates arguments, and a call needing torch raises ImportError."""
from . import (config, engram, mhc, modeling, moe, quant, transform,
               transpose)
from . import _binding, _torch_ops

try:
    import torch as _torch_module
except ImportError:
    _torch_module = None
if _torch_module is not None:
    _torch_ops.register(_binding.torch())

__all__ = ["config", "engram", "mhc", "modeling", "moe", "quant",
           "transform", "transpose"]
