"""tilejit.tile_kernels.quant.norm_backward on the GPU (TileKernels 2.1)
against float64 autograd of the RMSNorm forward: x_grad within a rounding
of x's dtype; weight_grad new (the weight's dtype) or added into a given
buffer in place (f32 main_grad), within calc_diff bounds; no weight."""
import pytest
import torch

from tilejit import tile_kernels as tk
from tk_testing import calc_diff


def autograd(x, w, grad, residual_grad, out_scale, eps=1e-6):
    """dx (+ residual_grad) and dw of y = x rsqrt(mean(x^2) + eps) w s in
    float64: the backward's formula with rstd that rsqrt."""
    xd = x.double().requires_grad_()
    wd = w.double().requires_grad_() if w is not None else None
    y = xd * torch.rsqrt(xd.square().mean(-1, keepdim=True) + eps) * out_scale
    if wd is not None:
        y = y * wd
    y.backward(grad.double())
    dx = xd.grad + (residual_grad.double() if residual_grad is not None
                    else 0)
    return dx, (wd.grad if wd is not None else None)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("h", [7168, 4128])
def test_norm_backward(dtype, h):
    t = 2000
    x = torch.randn(t, h, device="cuda").to(dtype)
    w = torch.randn(h, device="cuda").to(dtype)
    rstd = torch.rsqrt(x.double().square().mean(-1) + 1e-6).float()
    grad = torch.randn_like(x)
    res = torch.randn_like(x)
    want_dx, want_dw = autograd(x, w, grad, res, 0.5)
    dx, dw = tk.quant.norm_backward(grad, x, w, rstd, residual_out_grad=res,
                                    out_scale=0.5)
    assert dx.dtype == dtype and dw.dtype == dtype
    tol = (8e-3, 1e-4) if dtype == torch.bfloat16 else (1e-4, 1e-5)
    torch.testing.assert_close(dx.double(), want_dx.to(dtype).double(),
                               rtol=tol[0], atol=tol[1])
    assert calc_diff(dw, want_dw) < (1e-5 if dtype == torch.bfloat16
                                     else 1e-10)
    # Accumulated into an f32 buffer in place.
    main = torch.randn(h, device="cuda")
    before = main.clone()
    dx2, dw2 = tk.quant.norm_backward(grad, x, w, rstd, residual_out_grad=res,
                                      out_scale=0.5, weight_grad=main)
    assert dw2 is main and torch.equal(dx2, dx)
    assert calc_diff(main, before + want_dw) < 1e-10


def test_norm_backward_without_weight():
    x = torch.randn(300, 2048, device="cuda").bfloat16()
    rstd = torch.rsqrt(x.double().square().mean(-1) + 1e-6).float()
    grad = torch.randn_like(x)
    want_dx, _ = autograd(x, None, grad, None, 1.0)
    dx, dw = tk.quant.norm_backward(grad, x, None, rstd)
    assert dw is None
    torch.testing.assert_close(dx.double(), want_dx.bfloat16().double(),
                               rtol=8e-3, atol=1e-4)


def test_norm_backward_no_rows():
    """No rows: a given weight_grad left bit for bit (-0.0 stays), a new
    one zeros."""
    x = torch.empty(0, 1024, device="cuda").bfloat16()
    w = torch.randn(1024, device="cuda").bfloat16()
    rstd = torch.empty(0, device="cuda")
    main = torch.full((1024,), -0.0, device="cuda")
    dx, dw = tk.quant.norm_backward(x, x, w, rstd, weight_grad=main)
    assert dx.shape == (0, 1024) and dw is main
    assert bool(torch.signbit(main).all())
    _, new = tk.quant.norm_backward(x, x, w, rstd)
    assert new.dtype == torch.bfloat16 and not bool(new.any())
