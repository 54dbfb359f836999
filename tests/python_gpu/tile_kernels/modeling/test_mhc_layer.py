"""tilejit.tile_kernels.modeling.mhc on the GPU (TileKernels 1.0's
functional mHC layer): each autograd function against autograd of a torch
composition of the spec's formulas within TileKernels' tolerances
(moe_engram_mhc.md §3.1-§3.7, §4); mhc_pre_big_fuse bit for bit against
the unfused chain (§3.8), and so mhc_pre without autograd against mhc_pre
with it; a whole sublayer (mhc_pre -> y -> mhc_post) and the head,
backward through the gradient-sharing protocol (§3.10), against float64
autograd of the composition: every gradient within calc_diff 1e-4 (three
bf16 roundings of the residual's gradient give ~1e-6; a consumer's part
lost or counted twice gives 1e-3 or more)."""
import pytest
import torch

from tilejit.tile_kernels.modeling import mhc as layer
from tilejit.tile_kernels.modeling.mhc import ops
from tk_testing import assert_equal, calc_diff, torch_sinkhorn as sinkhorn


def ste(v, rounded):
    """v's value rounded as `rounded` does, v's gradient passed through."""
    return v + (rounded(v.detach()) - v.detach())


def tf32(v):
    return ((v.float().view(torch.int32) + 0x1000) & ~0x1FFF).view(
        torch.float32).to(v.dtype)


def bf16(v):
    return v.bfloat16().to(v.dtype)


class _Tf32Grad(torch.autograd.Function):
    """The identity, its gradient rounded to tf32 (the norm's backward
    rounds the product's gradient before its GEMMs, §3.3)."""

    @staticmethod
    def forward(ctx, v):
        return v.clone()

    @staticmethod
    def backward(ctx, g):
        return tf32(g)


def norm_fn_ref(residual, fn, normw, eps):
    """mhc_pre_norm_fn (§3.3) in residual's dtype: fn merged and
    tf32-rounded (straight-through), the product's gradient tf32-rounded, so
    that the GEMMs' products are those of the kernels."""
    x = residual.flatten(-2)
    if normw is not None:
        fn = fn * normw
    mul = _Tf32Grad.apply(x @ ste(fn, tf32).T)
    sq = (x * x).sum(-1, keepdim=True)
    return mul * torch.rsqrt(sq / x.shape[-1] + eps)


def split_ref(mixes, scale, base, mhc, post_mult, pre_eps):
    z = mixes * torch.cat([scale[i].expand(n) for i, n in
                           enumerate((mhc, mhc, mhc * mhc))]) + base
    pre = torch.sigmoid(z[..., :mhc]) + pre_eps
    post = torch.sigmoid(z[..., mhc:2 * mhc]) * post_mult
    comb = z[..., 2 * mhc:].unflatten(-1, (mhc, mhc))
    return pre.unsqueeze(-1), post.unsqueeze(-1), comb


def leaf(v, dtype=None):
    return v.detach().to(dtype or v.dtype).requires_grad_()


@pytest.mark.parametrize("n0", [1, 2])
@pytest.mark.parametrize("mhc", [2, 4])
def test_expand_to_mhc(n0, mhc):
    x = torch.randn(n0, 1024, 1280, device="cuda").bfloat16()
    x.requires_grad_()
    o = ops.expand_to_mhc(x, mhc)
    assert_equal(o, x.detach().unsqueeze(-2).expand(n0, 1024, mhc,
                                                     1280).contiguous())
    g = torch.randn_like(o)
    o.backward(g)
    torch.testing.assert_close(x.grad, g.float().sum(-2).bfloat16())


def test_sinkhorn_normalize():
    x = torch.randn(2, 1024, 4, 4, device="cuda", requires_grad=True)
    got = ops.sinkhorn_normalize(x, 10, 1e-6)
    xr = leaf(x)
    want = sinkhorn(xr, 10, 1e-6)
    torch.testing.assert_close(got, want)
    g = torch.randn_like(got)
    got.backward(g)
    want.backward(g)
    torch.testing.assert_close(x.grad, xr.grad)


@pytest.mark.parametrize("h", [1280, 2560])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("fuse", [False, True])
def test_pre_norm_fn(h, weighted, fuse):
    """Out atol = rtol = 1e-3, the residual's gradient within bf16's
    assert_close defaults, fn's atol 3e-2 rtol 1e-3 (TileKernels' test,
    which hangs a zero shared buffer on the residual for fuse)."""
    mhc, tokens = 4, 4096
    mhc3, kd = mhc * (mhc + 2), mhc * h
    m = torch.arange(mhc, device="cuda").view(mhc, 1) * 0.01 + 1
    residual = (torch.randn(1, tokens, mhc, h, device="cuda") * m).bfloat16()
    fn = torch.randn(mhc3, kd, device="cuda") * 1e-4 * (
        1 + 0.01 * torch.arange(mhc3, device="cuda").view(mhc3, 1))
    normw = torch.randn(kd, device="cuda") * 0.1 + 1 if weighted else None
    residual.requires_grad_()
    fn.requires_grad_()
    if normw is not None:
        normw.requires_grad_()
    if fuse:
        residual.untyped_storage().grad_from_mhc_post = torch.zeros_like(
            residual)
    out = ops.mhc_pre_norm_fn(residual, fn, normw, 1e-6, fuse_grad_acc=fuse)
    r64, f64 = leaf(residual, torch.float64), leaf(fn, torch.float64)
    n64 = None if normw is None else leaf(normw, torch.float64)
    want = norm_fn_ref(r64, f64, n64, 1e-6)
    torch.testing.assert_close(out.double(), want, atol=1e-3, rtol=1e-3)
    g = torch.randn_like(out)
    if fuse:
        shared = residual.untyped_storage().grad_from_mhc_post
    out.backward(g)
    want.backward(g.double())
    got_residual_grad = shared if fuse else residual.grad
    if fuse:
        assert residual.grad is None
        assert not hasattr(residual.untyped_storage(), "grad_from_mhc_post")
    torch.testing.assert_close(got_residual_grad,
                               r64.grad.to(torch.bfloat16))
    torch.testing.assert_close(fn.grad.double(), f64.grad, atol=3e-2,
                               rtol=1e-3)
    if weighted:
        assert calc_diff(normw.grad, n64.grad) < 1e-5


def test_pre_split_mixes():
    mhc, post_mult, pre_eps = 4, 2.0, 1e-2
    mixes = torch.randn(2, 4096, mhc * (mhc + 2), device="cuda",
                        requires_grad=True)
    scale = torch.randn(3, device="cuda", requires_grad=True)
    base = torch.randn(mhc * (mhc + 2), device="cuda", requires_grad=True)
    got = ops.mhc_pre_split_mixes(mixes, scale, base, mhc, post_mult, pre_eps)
    refs = [leaf(v) for v in (mixes, scale, base)]
    want = split_ref(*refs, mhc, post_mult, pre_eps)
    grads = [torch.randn_like(v) for v in got]
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=2e-5)
    torch.autograd.backward(got, grads)
    torch.autograd.backward(want, grads)
    for a, b in zip((mixes, scale, base), refs):
        torch.testing.assert_close(a.grad, b.grad, rtol=1e-5, atol=2e-5)


@pytest.mark.parametrize("h", [1280, 7680])
def test_pre_apply_mix(h):
    x = torch.sigmoid(torch.randn(2, 1024, 4, h, device="cuda")).bfloat16()
    mix = torch.randn(2, 1024, 4, 1, device="cuda").softmax(-2)
    x.requires_grad_()
    mix.requires_grad_()
    out = ops.mhc_pre_apply_mix(x, mix)
    xr, mr = leaf(x, torch.float32), leaf(mix)
    want = (xr * mr).sum(-2)
    torch.testing.assert_close(out.float(), want, atol=1e-2, rtol=1e-3)
    g = torch.randn_like(out)
    out.backward(g)
    want.backward(g.float())
    # Both rounded to bf16 (TileKernels' reference runs in bf16).
    torch.testing.assert_close(x.grad, xr.grad.bfloat16(), atol=1e-2,
                               rtol=1e-3)
    torch.testing.assert_close(mix.grad, mr.grad, atol=1e-2, rtol=1e-3)


def test_post_hangs_the_residual_gradient_on_its_storage():
    h = 2560
    x = torch.randn(2, 512, h, device="cuda").bfloat16().requires_grad_()
    residual = torch.randn(2, 512, 4, h, device="cuda").bfloat16()
    residual.requires_grad_()
    post = torch.randn(2, 512, 4, 1, device="cuda", requires_grad=True)
    comb = torch.randn(2, 512, 4, 4, device="cuda", requires_grad=True)
    out = ops.mhc_post(x, residual, post, comb)
    refs = [leaf(v, torch.float32) for v in (x, residual, post, comb)]
    want = refs[2] * refs[0].unsqueeze(-2) + torch.einsum(
        "...io,...ih->...oh", refs[3], refs[1])
    torch.testing.assert_close(out, want.bfloat16())
    g = torch.randn_like(out)
    out.backward(g)
    want.backward(g.float())
    torch.testing.assert_close(x.grad, refs[0].grad.bfloat16())
    torch.testing.assert_close(residual.grad, refs[1].grad.bfloat16())
    # mhc_pre_apply_mix's and mhc_pre_norm_fn's backwards add into it.
    assert_equal(residual.untyped_storage().grad_from_mhc_post, residual.grad)
    for a, b in zip((post, comb), refs[2:]):
        torch.testing.assert_close(a.grad, b.grad, atol=1e-4, rtol=1e-4)


def test_head_compute_mix():
    mix = torch.randn(2, 4096, 4, device="cuda", requires_grad=True)
    scale = torch.randn(1, device="cuda", requires_grad=True)
    base = torch.randn(4, device="cuda", requires_grad=True)
    got = ops.mhc_head_compute_mix(mix, scale, base, 1e-2)
    refs = [leaf(v) for v in (mix, scale, base)]
    want = torch.sigmoid(refs[0] * refs[1] + refs[2]) + 1e-2
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
    g = torch.randn_like(got)
    got.backward(g)
    want.backward(g)
    for a, b in zip((mix, scale, base), refs):
        torch.testing.assert_close(a.grad, b.grad, rtol=1e-4, atol=1e-5)


def params(h, mhc=4, weighted=True):
    mhc3, kd = mhc * (mhc + 2), mhc * h
    fn = torch.randn(mhc3, kd, device="cuda") * 1e-2
    scale = torch.randn(3, device="cuda") * 0.1 + 1
    base = torch.randn(mhc3, device="cuda") * 0.1
    normw = torch.randn(kd, device="cuda") * 0.1 + 1 if weighted else None
    return fn, scale, base, normw


@pytest.mark.parametrize("tokens", [512, 2048])
@pytest.mark.parametrize("h", [1280, 4096])
def test_pre_big_fuse_is_the_unfused_chain(tokens, h):
    residual = torch.randn(1, tokens, 4, h, device="cuda").bfloat16()
    fn, scale, base, _ = params(h)
    with torch.no_grad():
        post, comb, layer_input = ops.mhc_pre_big_fuse(
            residual, fn, scale, base, 1e-6, 1e-6, 1e-6, 1.0, 10)
        mixes = ops.mhc_pre_norm_fn(residual, fn, None, 1e-6,
                                    fuse_grad_acc=False)
        pre, post_u, comb_u = ops.mhc_pre_split_mixes(mixes, scale, base, 4,
                                                      1.0, 1e-6)
        comb_u = ops.sinkhorn_normalize(comb_u, 10, 1e-6)
        assert_equal(post, post_u)
        assert_equal(comb, comb_u)
        assert_equal(layer_input, ops.mhc_pre_apply_mix(residual, pre))


def layer_ref(residual, fn, scale, base, normw, w, post_mult):
    """float64: mhc_pre (§3.3-§3.5, the layer input rounded to bf16), the
    sublayer y = layer_input * w, mhc_post (§3.6)."""
    mixes = norm_fn_ref(residual, fn, normw, 1e-6)
    pre, post, comb = split_ref(mixes, scale, base, 4, post_mult, 1e-6)
    comb = sinkhorn(comb, 10, 1e-6)
    layer_input = ste((pre * residual).sum(-2), bf16)
    y = ste(layer_input * w, bf16)
    return post * y.unsqueeze(-2) + torch.einsum("...io,...ih->...oh", comb,
                                                 residual)


@pytest.mark.parametrize("weighted", [False, True])
def test_sublayer_backward_through_the_shared_gradient(weighted):
    """Every gradient of mhc_pre -> y -> mhc_post: the residual's is
    mhc_post's, with mhc_pre_apply_mix's and mhc_pre_norm_fn's added into
    the same buffer (autograd sees one tensor)."""
    h, post_mult = 1280, 2.0
    residual = torch.randn(2, 333, 4, h, device="cuda").bfloat16()
    fn, scale, base, normw = params(h, weighted=weighted)
    w = torch.randn(h, device="cuda").bfloat16()
    named = [(n, v.requires_grad_()) for n, v in zip(
        ("residual", "fn", "scale", "base", "normw", "w"),
        (residual, fn, scale, base, normw, w)) if v is not None]
    layer_input, (post, comb) = layer.mhc_pre(
        residual, fn, scale, base, norm_weight=normw,
        post_mult_value=post_mult)
    out = ops.mhc_post(layer_input * w, residual, post, comb)
    refs = [None if v is None else leaf(v, torch.float64)
            for v in (residual, fn, scale, base, normw, w)]
    want = layer_ref(*refs, post_mult)
    assert calc_diff(out, want) < 1e-5
    g = torch.randn_like(out)
    out.backward(g)
    want.backward(g.double())
    assert not hasattr(residual.untyped_storage(), "grad_from_mhc_post")
    for (name, a), b in zip(named, [r for r in refs if r is not None]):
        d = calc_diff(a.grad, b.grad)
        assert d < 1e-4, f"{name}'s gradient: calc_diff {d:.3g}"


def test_pre_without_autograd_is_the_autograd_path():
    h = 2560
    residual = torch.randn(1, 1024, 4, h, device="cuda").bfloat16()
    fn, scale, base, normw = params(h)
    with torch.no_grad():
        fused = layer.mhc_pre(residual, fn, scale, base, norm_weight=normw)
    chained = layer.mhc_pre(residual, fn.requires_grad_(), scale, base,
                            norm_weight=normw)
    assert_equal(fused[0], chained[0].detach())
    assert_equal(fused[1][0], chained[1][0].detach())
    assert_equal(fused[1][1], chained[1][1].detach())


def test_head_and_its_gradients():
    h = 2048
    residual = torch.randn(2, 300, 4, h, device="cuda").bfloat16()
    fn = torch.randn(4, 4 * h, device="cuda") * 1e-2
    scale = torch.ones(1, device="cuda")
    base = torch.randn(4, device="cuda") * 0.1
    normw = torch.randn(4 * h, device="cuda") * 0.1 + 1
    leaves = [v.requires_grad_() for v in (residual, fn, scale, base, normw)]
    out = layer.mhc_head(residual, fn, scale, base, norm_weight=normw,
                         pre_eps=1e-2)
    refs = [leaf(v, torch.float64) for v in leaves]
    mixes = norm_fn_ref(refs[0], refs[1], refs[4], 1e-6)
    mix = torch.sigmoid(mixes * refs[2] + refs[3]) + 1e-2
    want = (mix.unsqueeze(-1) * refs[0]).sum(-2)
    assert calc_diff(out, want) < 1e-5
    g = torch.randn_like(out)
    out.backward(g)
    want.backward(g.double())
    for name, a, b in zip(("residual", "fn", "scale", "base", "normw"),
                          leaves, refs):
        d = calc_diff(a.grad, b.grad)
        assert d < 1e-4, f"{name}'s gradient: calc_diff {d:.3g}"
    # 1.0's padded fn (mhc (mhc + 2) rows): the same output, and zero
    # gradient in the rows after mhc.
    padded = torch.cat([fn.detach(), torch.randn(20, 4 * h, device="cuda")])
    padded.requires_grad_()
    again = layer.mhc_head(residual.detach(), padded, scale.detach(),
                           base.detach(), norm_weight=normw.detach(),
                           pre_eps=1e-2)
    assert_equal(again, out.detach())
    again.backward(g)
    assert int(padded.grad[4:].count_nonzero()) == 0
