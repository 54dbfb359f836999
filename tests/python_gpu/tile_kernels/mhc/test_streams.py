"""tilejit.tile_kernels.mhc's stream and mix entry points (TileKernels 2.1) on the
GPU against torch compositions of the spec (MEM §3.1, §3.5, §3.6):
expand_to_mhc_fwd copies (equal), expand_to_mhc_bwd sums the streams in
f32 from stream 0 (equal), mhc_pre_apply_mix_fwd and mhc_post_fwd (fma
chains: close within TileKernels' tolerances, atol 1e-2 / rtol 1e-3 and
bf16's defaults). The buffers they write are the caller's."""
import pytest
import torch

from tilejit import tile_kernels as tk
from tk_testing import assert_equal

SHAPES = [(1, 1024, 4, 1280), (2, 4096, 4, 2560), (1, 37, 2, 7168),
          (1, 19, 8, 1030), (1, 0, 4, 1280)]


def randn(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(*shape, device="cuda", generator=g).to(dtype)


@pytest.mark.parametrize("n0,n1,mhc,h", SHAPES)
def test_expand_to_mhc(n0, n1, mhc, h):
    x = randn(n0, n1, h, dtype=torch.bfloat16)
    o = torch.full((n0, n1, mhc, h), float("nan"), dtype=torch.bfloat16,
                   device="cuda")
    assert tk.mhc.expand_to_mhc_fwd(x, o) is None
    assert_equal(o, x.unsqueeze(-2).expand(n0, n1, mhc, h).contiguous())
    o_grad = randn(n0, n1, mhc, h, dtype=torch.bfloat16, seed=1)
    x_grad = torch.empty_like(x)
    assert tk.mhc.expand_to_mhc_bwd(o_grad, x_grad) is None
    acc = torch.zeros(n0, n1, h, device="cuda")
    for m in range(mhc):
        acc = acc + o_grad[:, :, m].float()
    assert_equal(x_grad, acc.bfloat16())


@pytest.mark.parametrize("n0,n1,mhc,h", SHAPES)
def test_mhc_pre_apply_mix_fwd(n0, n1, mhc, h):
    x = randn(n0, n1, mhc, h).sigmoid().bfloat16()
    mix = randn(n0, n1, mhc, 1, seed=1).softmax(-2)
    o = torch.empty(n0, n1, h, dtype=torch.bfloat16, device="cuda")
    assert tk.mhc.mhc_pre_apply_mix_fwd(x, mix, o) is None
    want = (x.double() * mix.double()).sum(-2).bfloat16()
    torch.testing.assert_close(o, want, atol=1e-2, rtol=1e-3)


@pytest.mark.parametrize("n0,n1,mhc,h", SHAPES)
def test_mhc_post_fwd(n0, n1, mhc, h):
    x = randn(n0, n1, h, dtype=torch.bfloat16)
    residual = randn(n0, n1, mhc, h, dtype=torch.bfloat16, seed=1)
    post = randn(n0, n1, mhc, 1, seed=2)
    comb = randn(n0, n1, mhc, mhc, seed=3)
    out = tk.mhc.mhc_post_fwd(x, residual, post, comb)
    want = (post.double() * x.double().unsqueeze(-2) +
            torch.einsum("abio,abih->aboh", comb.double(),
                         residual.double())).bfloat16()
    torch.testing.assert_close(out, want)
    given = torch.empty_like(residual)
    assert tk.mhc.mhc_post_fwd(x, residual, post, comb, out=given) is given
    assert_equal(given, out)


@pytest.mark.parametrize("n0,n1", [(1, 1024), (2, 4096), (1, 0)])
def test_mhc_head_compute_mix_fwd(n0, n1):
    x = randn(n0, n1, 4)
    scale, base = randn(1, seed=1), randn(4, seed=2)
    out = torch.empty_like(x)
    assert tk.mhc.mhc_head_compute_mix_fwd(x, scale, base, out, 0.01) is None
    torch.testing.assert_close(out, (x * scale + base).sigmoid() + 0.01,
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("n0,n1", [(1, 1024), (2, 4096), (1, 0)])
def test_mhc_pre_split_mixes_fwd(n0, n1):
    mhc = 4
    x = randn(n0, n1, mhc * (mhc + 2))
    scale, base = randn(3, seed=1), randn(mhc * (mhc + 2), seed=2)
    pre = torch.empty(n0, n1, mhc, 1, device="cuda")
    post, comb = torch.empty_like(pre), torch.empty(n0, n1, mhc, mhc,
                                                    device="cuda")
    assert tk.mhc.mhc_pre_split_mixes_fwd(x, scale, base, pre, post, comb,
                                          2.0, 0.01) is None
    z = x * torch.cat([scale[i].expand(n) for i, n in
                       enumerate((mhc, mhc, mhc * mhc))]) + base
    close = dict(rtol=1e-5, atol=2e-5)
    torch.testing.assert_close(pre[..., 0], z[..., :mhc].sigmoid() + 0.01,
                               **close)
    torch.testing.assert_close(post[..., 0],
                               z[..., mhc:2 * mhc].sigmoid() * 2.0, **close)
    torch.testing.assert_close(comb.flatten(-2), z[..., 2 * mhc:], **close)


@pytest.mark.parametrize("n0,n1,h", [(1, 1024, 1280), (2, 4096, 7168),
                                     (1, 19, 1030), (1, 0, 1280)])
def test_mhc_post_bwd(n0, n1, h):
    mhc = 4
    x = randn(n0, n1, h, dtype=torch.bfloat16)
    residual = randn(n0, n1, mhc, h, dtype=torch.bfloat16, seed=1)
    post = randn(n0, n1, mhc, 1, seed=2)
    comb = randn(n0, n1, mhc, mhc, seed=3)
    d_o = randn(n0, n1, mhc, h, dtype=torch.bfloat16, seed=4)
    d_x, d_res, d_post, d_comb = tk.mhc.mhc_post_bwd(x, residual, post, comb,
                                                     d_o)
    g = d_o.double()
    torch.testing.assert_close(
        d_x, (post.double() * g).sum(-2).bfloat16())
    torch.testing.assert_close(
        d_res, torch.einsum("abio,aboh->abih", comb.double(), g).bfloat16())
    torch.testing.assert_close(
        d_post, (x.double().unsqueeze(-2) * g).sum(-1, keepdim=True).float(),
        atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(
        d_comb, torch.einsum("abih,aboh->abio", residual.double(), g).float(),
        atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("n0,n1,mhc,h", SHAPES)
def test_mhc_pre_apply_mix_bwd(n0, n1, mhc, h):
    x = randn(n0, n1, mhc, h).sigmoid().bfloat16()
    mix = randn(n0, n1, mhc, 1, seed=1).softmax(-2)
    o_grad = randn(n0, n1, h, dtype=torch.bfloat16, seed=2)
    x_grad = randn(n0, n1, mhc, h, dtype=torch.bfloat16, seed=3)
    before = x_grad.clone()
    mix_grad = tk.mhc.mhc_pre_apply_mix_bwd(o_grad, x, mix, x_grad)
    g = o_grad.double().unsqueeze(-2)
    # x_grad accumulated in place: one rounding of before + mix * o_grad.
    torch.testing.assert_close(
        x_grad, (before.double() + mix.double() * g).bfloat16())
    torch.testing.assert_close(
        mix_grad, (g * x.double()).sum(-1, keepdim=True).float(),
        atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("h", [1280, 7168])
def test_mhc_fn_normw_merge(h):
    fn, normw = randn(24, 4 * h), randn(4 * h, seed=1) * 0.1 + 1
    out_fn = torch.empty_like(fn)
    assert tk.mhc.mhc_fn_normw_merge_fwd(fn, normw, out_fn) is None
    assert_equal(out_fn, fn * normw)
    g = randn(24, 4 * h, seed=2)
    fn_grad, normw_grad = randn(24, 4 * h, seed=3), randn(4 * h, seed=4)
    want_fn = torch.addcmul(fn_grad, g, normw)  # one rounding, as an fma
    want_w = normw_grad.double() + (g.double() * fn.double()).sum(0)
    assert tk.mhc.mhc_fn_normw_merge_bwd(fn, normw, g, fn_grad,
                                         normw_grad) is None
    torch.testing.assert_close(fn_grad, want_fn, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(normw_grad, want_w.float(), rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("n0,n1", [(1, 1024), (2, 4096), (1, 0)])
def test_mhc_head_compute_mix_bwd(n0, n1):
    x, dout = randn(n0, n1, 4), randn(n0, n1, 4, seed=5)
    scale, base = randn(1, seed=1), randn(4, seed=2)
    sms = 132
    in_grad = torch.empty_like(x)
    scale_part = torch.empty(sms, 1, device="cuda")
    base_part = torch.empty(sms, 4, device="cuda")
    assert tk.mhc.mhc_head_compute_mix_bwd(dout, x, scale, base, in_grad,
                                           scale_part, base_part, sms) is None
    s = (x.double() * scale.double() + base.double()).sigmoid()
    gz = s * (1 - s) * dout.double()
    close = dict(rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(in_grad, (gz * scale.double()).float(),
                               **close)
    torch.testing.assert_close(scale_part.sum(0),
                               (gz * x.double()).sum().reshape(1).float(),
                               **close)
    torch.testing.assert_close(base_part.sum(0),
                               gz.reshape(-1, 4).sum(0).float(), **close)
