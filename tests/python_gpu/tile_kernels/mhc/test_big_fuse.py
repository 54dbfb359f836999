"""tilejit.tile_kernels.mhc.mhc_pre_big_fuse_fwd on the GPU (TileKernels
2.1): the spec's contract (tk21_ops.md §6.4), the same bits as the unfused
chain of the package's own kernels —
mhc_reduce_partials_and_rmsnorm_fwd (one group) -> mhc_pre_split_mixes_fwd
-> mhc_sinkhorn_fwd -> mhc_pre_apply_mix_fwd — on TileKernels' test shapes
(residual randn, the partials from an actual split-K product)."""
import pytest
import torch

from tilejit import tile_kernels as tk
from tk_testing import assert_equal

m = tk.mhc


def partials(residual, fn, splits):
    """TileKernels' mhc_pre_norm_fn_partials_ref: K in `splits` equal
    contiguous chunks, one product a chunk."""
    t = residual.shape[0]
    x = residual.float().reshape(t, -1)
    xs, fs = x.chunk(splits, dim=1), fn.chunk(splits, dim=1)
    mul = torch.stack([a @ b.T for a, b in zip(xs, fs)])
    sq = torch.stack([(a * a).sum(-1) for a in xs])
    return mul.contiguous(), sq.contiguous()


@pytest.mark.parametrize("tokens", [512, 1024, 2048, 8192, 1000])
@pytest.mark.parametrize("h", [1280, 2560, 4096])
def test_big_fuse_equals_the_chain(tokens, h):
    mhc, splits, repeat = 4, 16, 10
    mhc3 = mhc * (mhc + 2)
    eps, pre_eps, sk_eps, post_mult = 1e-6, 1e-6, 1e-6, 1.0
    residual = (torch.randn(tokens, mhc, h, device="cuda") *
                (1 + 0.01 * torch.arange(mhc, device="cuda")).view(
                    1, mhc, 1)).bfloat16()
    fn = torch.randn(mhc3, mhc * h, device="cuda") * 1e-4
    scale = torch.randn(3, device="cuda") * 0.1
    base = torch.randn(mhc3, device="cuda") * 0.1
    mul, sq = partials(residual, fn, splits)

    post = torch.empty(tokens, mhc, device="cuda")
    comb = torch.empty(tokens, mhc * mhc, device="cuda")
    layer_input = torch.empty(tokens, h, device="cuda", dtype=torch.bfloat16)
    m.mhc_pre_big_fuse_fwd(mul, sq, scale, base, residual, post, comb,
                           layer_input, eps, pre_eps, sk_eps, post_mult,
                           repeat, splits)

    out_mul = torch.empty(tokens, 1, mhc3, device="cuda")
    sqrsum = torch.empty(tokens, 1, device="cuda")
    mixes = torch.empty(tokens, mhc3, device="cuda")
    m.mhc_reduce_partials_and_rmsnorm_fwd(
        mul.view(splits, tokens, 1, mhc3), sq.view(splits, tokens, 1),
        out_mul, sqrsum, mixes, mhc * h, eps, splits)
    pre = torch.empty(tokens, mhc, 1, device="cuda")
    want_post = torch.empty(tokens, mhc, 1, device="cuda")
    logits = torch.empty(tokens, mhc, mhc, device="cuda")
    m.mhc_pre_split_mixes_fwd(mixes, scale, base, pre, want_post, logits,
                              post_mult, pre_eps)
    want_comb = torch.empty_like(logits)
    m.mhc_sinkhorn_fwd(logits, want_comb, repeat, sk_eps)
    want_input = torch.empty(tokens, h, device="cuda", dtype=torch.bfloat16)
    m.mhc_pre_apply_mix_fwd(residual, pre, want_input)

    assert_equal(post, want_post.view(tokens, mhc))
    assert_equal(comb, want_comb.view(tokens, mhc * mhc))
    assert_equal(layer_input, want_input)


def test_big_fuse_refuses_other_splits():
    t, mhc, h = 8, 4, 1024
    mul = torch.randn(16, t, 24, device="cuda")
    sq = torch.rand(16, t, device="cuda")
    with pytest.raises(ValueError, match="argument 'n_splits' is 4"):
        m.mhc_pre_big_fuse_fwd(
            mul, sq, torch.randn(3, device="cuda"),
            torch.randn(24, device="cuda"),
            torch.randn(t, mhc, h, device="cuda").bfloat16(),
            torch.empty(t, mhc, device="cuda"),
            torch.empty(t, 16, device="cuda"),
            torch.empty(t, h, device="cuda", dtype=torch.bfloat16),
            1e-6, 1e-6, 1e-6, 1.0, 10, 4)
