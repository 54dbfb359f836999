"""tilejit.tile_kernels.engram.fused_weight on the GPU: float(wh) *
float(we) in f32, equal to torch's product (exact: two bf16 significands
fit in f32's), TileKernels' shapes."""
import pytest
import torch

from tilejit import tile_kernels as tk
from tk_testing import assert_equal


@pytest.mark.parametrize("d", [256, 1280, 7168])
def test_fused_weight(d):
    wh = torch.randn(4, d, device="cuda").bfloat16()
    we = torch.randn(4, d, device="cuda").bfloat16()
    assert_equal(tk.engram.fused_weight(wh, we), wh.float() * we.float())
