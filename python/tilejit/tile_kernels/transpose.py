"""tile_kernels.transpose (TileKernels 1.0) on tilejit."""
from ._binding import tk_op

transpose = tk_op("transpose", "x", returns="out")
batched_transpose = tk_op("batched_transpose", "x", returns="out")
