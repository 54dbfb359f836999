"""tilejit.tile_kernels.engram.grad_w_reduce on the GPU: the partial rows
summed and multiplied by the other weight, added into the gradients in
place; against a float64 torch reference within TileKernels' calc_diff
bound (1e-10)."""
import pytest
import torch

from tilejit import tile_kernels as tk
from tk_testing import calc_diff


@pytest.mark.parametrize("d", [512, 2560, 7168])
def test_grad_w_reduce(d):
    b, hc = 132, 4
    partial = torch.randn(b, hc, d, device="cuda")
    wh = torch.randn(hc, d, device="cuda").bfloat16()
    we = torch.randn(hc, d, device="cuda").bfloat16()
    gwh = torch.randn(hc, d, device="cuda")
    gwe = torch.randn(hc, d, device="cuda")
    gw = partial.double().sum(0)
    want_h = gwh.double() + gw * we.double()
    want_e = gwe.double() + gw * wh.double()
    buffers = (gwh.data_ptr(), gwe.data_ptr())
    assert tk.engram.grad_w_reduce(partial, wh, we, gwh, gwe) is None
    assert (gwh.data_ptr(), gwe.data_ptr()) == buffers
    assert calc_diff(gwh, want_h) < 1e-10
    assert calc_diff(gwe, want_e) < 1e-10
