"""tilejit.tile_kernels.mhc.mhc_pre_split_mixes_bwd on the GPU (TileKernels
2.1) against float64 autograd of the split mixes' forward formulas, within
TileKernels' rtol 1e-5, atol 2e-5; the scale and base gradients written,
not added to."""
import pytest
import torch

from tilejit import tile_kernels as tk


@pytest.mark.parametrize("n0,n1", [(1, 1024), (2, 4096)])
def test_split_mixes_bwd(n0, n1):
    mhc, post_mult = 4, 2.0
    m3 = mhc * (mhc + 2)
    inp = torch.randn(n0, n1, m3, device="cuda")
    scale = torch.randn(3, device="cuda")
    base = torch.randn(m3, device="cuda")
    x = inp.double().requires_grad_()
    s = scale.double().requires_grad_()
    b = base.double().requires_grad_()
    z = torch.cat([x[..., :mhc] * s[0], x[..., mhc:2 * mhc] * s[1],
                   x[..., 2 * mhc:] * s[2]], -1) + b
    pre = torch.sigmoid(z[..., :mhc]) + 0.01
    post = torch.sigmoid(z[..., mhc:2 * mhc]) * post_mult
    comb = z[..., 2 * mhc:]
    grads = [torch.randn(n0, n1, mhc, 1, device="cuda"),
             torch.randn(n0, n1, mhc, 1, device="cuda"),
             torch.randn(n0, n1, mhc, mhc, device="cuda")]
    torch.autograd.backward(
        [pre, post, comb],
        [grads[0].double().view(n0, n1, mhc), grads[1].double().view(
            n0, n1, mhc), grads[2].double().view(n0, n1, mhc * mhc)])
    post_saved = post.detach().float().view(n0, n1, mhc, 1)
    in_grad = torch.empty_like(inp)
    scale_grad = torch.full((3,), 7.0, device="cuda")  # overwritten
    base_grad = torch.full((m3,), 7.0, device="cuda")
    assert tk.mhc.mhc_pre_split_mixes_bwd(
        *grads, inp, post_saved, scale, base, in_grad, scale_grad, base_grad,
        post_mult) is None
    for got, want in ((in_grad, x.grad), (scale_grad, s.grad),
                      (base_grad, b.grad)):
        torch.testing.assert_close(got.double(), want, rtol=1e-5, atol=2e-5)
