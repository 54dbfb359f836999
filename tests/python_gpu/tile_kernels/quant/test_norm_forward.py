"""tilejit.tile_kernels.quant.norm_forward on the GPU (TileKernels 2.1)
against a float64 torch RMSNorm: out within a rounding of x's dtype, rstd
within f32 tolerance, residual_out (x + residual in x's dtype) exact, and
norm_input x itself without a residual."""
import pytest
import torch

from tilejit import tile_kernels as tk
from tk_testing import assert_equal


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("h", [7168, 4112])
@pytest.mark.parametrize("with_residual", [False, True])
def test_norm_forward(dtype, h, with_residual):
    x = torch.randn(1000, h, device="cuda").to(dtype)
    w = torch.randn(h, device="cuda").to(dtype)
    res = torch.randn_like(x) if with_residual else None
    out, rstd, norm_input = tk.quant.norm_forward(
        x, w, 1e-6, residual=res, out_scale=0.5, with_rstd=True)
    hx = (x.float() + res.float()).to(dtype) if with_residual else x
    if with_residual:
        assert_equal(norm_input, hx)
    else:
        assert norm_input is x
    want_rstd = torch.rsqrt(hx.double().square().mean(-1) + 1e-6)
    torch.testing.assert_close(rstd.double(), want_rstd, rtol=2e-6, atol=0)
    want = hx.double() * want_rstd.unsqueeze(-1) * (w.double() * 0.5)
    tol = (8e-3, 1e-5) if dtype == torch.bfloat16 else (2e-6, 1e-7)
    torch.testing.assert_close(out.double(), want.to(dtype).double(),
                               rtol=tol[0], atol=tol[1])


def test_norm_forward_residual_in_place():
    x = torch.randn(333, 2048, device="cuda").bfloat16()
    res = torch.randn_like(x)
    h = (x.float() + res.float()).bfloat16()
    want, _, _ = tk.quant.norm_forward(x, None, 1e-6, residual=res.clone())
    out, _, norm_input = tk.quant.norm_forward(x, None, 1e-6, residual=res,
                                               residual_out=res)
    assert norm_input is res
    assert_equal(res, h)
    assert_equal(out, want)
