"""tilejit.tile_kernels.engram.engram_gate_fwd on the GPU (2.1's form: kv,
image_token_mask, inplace) against a float64 torch reference of
TileKernels' engram gate, within its calc_diff bound 2e-10; the output the
same bit for bit with and without the saved values, and in place."""
import pytest
import torch

from tilejit import tile_kernels as tk
from tk_testing import assert_equal, calc_diff


def reference(x, kv, w, eps, clamp, mask=None):
    """TileKernels' gate in float64 (z = 0 counts as positive, as its
    kernel's copysign)."""
    hc, d = x.shape[1], x.shape[2]
    xd, kd = x.double(), kv[:, :hc].double()
    vd = kv[:, hc].double()
    rx = torch.rsqrt(xd.square().mean(-1) + eps)
    rk = torch.rsqrt(kd.square().mean(-1) + eps)
    dot = (xd * w.double() * kd).sum(-1)
    z = dot * rx * rk / d ** 0.5
    r = z.abs().clamp_min(clamp).sqrt()
    g = torch.sigmoid(torch.where(z < 0, -r, r))
    out = (x.float() + g.float().unsqueeze(-1) * vd.float().unsqueeze(1))
    out = out.bfloat16()
    if mask is not None:
        out = torch.where(mask.view(-1, 1, 1), x, out)
    return out, dot, g, rx, rk


def inputs(t, hc, d, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(t, hc, d, device="cuda", generator=g).bfloat16()
    kv = torch.randn(t, hc + 1, d, device="cuda", generator=g).bfloat16()
    w = torch.randn(hc, d, device="cuda", generator=g)
    return x, kv, w


@pytest.mark.parametrize("d", [2048, 2560, 7168])
def test_engram_gate_fwd(d):
    x, kv, w = inputs(4001, 4, d, d)
    got = tk.engram.engram_gate_fwd(x, kv, w, 1e-20, 1e-6)
    want = reference(x, kv, w, 1e-20, 1e-6)
    for name, a, b in zip(("out", "dot", "gate", "rstd_x", "rstd_k"), got,
                          want):
        assert calc_diff(a, b) < 2e-10, name
    plain = tk.engram.engram_gate_fwd(x, kv, w, 1e-20, 1e-6,
                                      save_for_backward=False)
    assert plain[1:] == (None, None, None, None)
    assert_equal(plain[0], got[0])
    y = x.clone()
    inplace = tk.engram.engram_gate_fwd(y, kv, w, 1e-20, 1e-6,
                                        save_for_backward=False,
                                        inplace=True)
    assert inplace[0].data_ptr() == y.data_ptr()
    assert_equal(y, got[0])


def test_engram_gate_fwd_image_tokens():
    x, kv, w = inputs(1001, 4, 3072, 1)
    mask = torch.rand(1001, device="cuda") < 0.25
    got = tk.engram.engram_gate_fwd(x, kv, w, 1e-20, 1e-6,
                                    image_token_mask=mask)
    want = reference(x, kv, w, 1e-20, 1e-6, mask)
    assert_equal(got[0][mask], x[mask])
    for a, b in zip(got, want):
        assert calc_diff(a, b) < 2e-10


def reference_bwd(grad_out, x, kv, w, dot, g, rx, rk, clamp, num_sms,
                  mask=None):
    """TileKernels' backward formulas in float64 from the saved values, the
    gradients rounded to bf16 as its reference's (rounding alone moves
    calc_diff by ~1.4e-6, above the bound)."""
    t, hc, d = x.shape
    go, xd = grad_out.double(), x.double()
    kd, vd, wd = kv[:, :hc].double(), kv[:, hc].double(), w.double()
    p, g, rx, rk = dot.double(), g.double(), rx.double(), rk.double()
    c = rx * rk / d ** 0.5
    dldg = (go * vd.unsqueeze(1)).sum(-1)
    flat = (p.abs() * c < clamp) | (p == 0)
    dldp = torch.where(flat, torch.zeros_like(p),
                       dldg * g * (1 - g) * 0.5 * (c / p.abs()).sqrt())
    if mask is not None:
        dldp = torch.where(mask.view(-1, 1), torch.zeros_like(p), dldp)
    ax = (p * rx * rx / d).unsqueeze(-1)
    ak = (p * rk * rk / d).unsqueeze(-1)
    dp = dldp.unsqueeze(-1)
    grad_x = go + dp * (kd * wd - xd * ax)
    grad_k = dp * (xd * wd - kd * ak)
    grad_v = (go * g.unsqueeze(-1)).sum(1)
    if mask is not None:
        grad_x = torch.where(mask.view(-1, 1, 1), go, grad_x)
        grad_v = torch.where(mask.view(-1, 1), torch.zeros_like(grad_v),
                             grad_v)
    per = -(-t // num_sms)
    terms = dp * xd * kd
    partial = torch.zeros(num_sms, hc, d, dtype=torch.float64,
                          device=x.device)
    for b in range(num_sms):
        partial[b] = terms[b * per:(b + 1) * per].sum(0)
    grad_kv = torch.cat([grad_k, grad_v.unsqueeze(1)], 1)
    return grad_x.bfloat16(), grad_kv.bfloat16(), partial


@pytest.mark.parametrize("d", [2048, 7168])
@pytest.mark.parametrize("image", [False, True])
def test_engram_gate_bwd(d, image):
    x, kv, w = inputs(4001, 4, d, d + 1)
    mask = (torch.rand(4001, device="cuda") < 0.25) if image else None
    _, dot, g, rx, rk = tk.engram.engram_gate_fwd(x, kv, w, 1e-20, 1e-6)
    grad_out = torch.randn_like(x)
    got = tk.engram.engram_gate_bwd(grad_out, x, kv, w, dot, g, rx, rk, 1e-6,
                                    image_token_mask=mask)
    num_sms = tk.config.get_num_sms()
    assert got[1].shape == kv.shape and got[2].shape == (num_sms, 4, d)
    want = reference_bwd(grad_out, x, kv, w, dot, g, rx, rk, 1e-6, num_sms,
                         mask)
    for a, b in zip(got, want):
        assert calc_diff(a, b) < 1e-8
    if image:
        assert_equal(got[0][mask], grad_out[mask])
        assert not got[1][mask].any()
