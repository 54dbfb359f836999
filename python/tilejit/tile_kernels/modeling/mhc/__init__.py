"""tile_kernels.modeling.mhc on tilejit: TileKernels 1.0's functional mHC
layer (moe_engram_mhc.md §3.10; removed in 2.1, kept here so that 1.0's
code runs): expand_from_embedding, mhc_pre and mhc_head over the autograd
functions of `ops`; the caller runs the sublayer and then
ops.mhc_post(y, residual, post_mix, comb_mix).

One difference from 1.0: mhc_pre without autograd (the fused inference
path) applies norm_weight (merged into fn first); 1.0 dropped it there, so
its inference and training paths disagreed when a norm weight was given.
"""
from . import ops
from ..._binding import torch


def expand_from_embedding(x, mhc_mult=4):
    """The embedding x (..., H) as the mHC residual (..., mhc_mult, H)."""
    return ops.expand_to_mhc(x, mhc_mult)


def mhc_pre(residual, fn, scale, base, *, norm_weight=None, norm_eps=1e-6,
            mhc_mult=4, post_mult_value=1.0, pre_eps=1e-6, sinkhorn_eps=1e-6,
            sinkhorn_repeat=10, n_splits=16):
    """mHC's pre step for one sublayer: (layer_input (..., H) bf16,
    (post_mix (..., mhc, 1), comb_mix (..., mhc, mhc))) of residual
    (..., mhc, H) bf16, fn (mhc (mhc + 2), mhc H) f32, scale (3,) and base
    (mhc (mhc + 2),) f32; norm_weight (mhc H,) f32 scales fn's columns.
    With autograd enabled: mhc_pre_norm_fn -> mhc_pre_split_mixes ->
    sinkhorn_normalize (comb) -> mhc_pre_apply_mix; without, the fused
    mhc_pre_big_fuse (the same bits)."""
    _check_streams(residual, mhc_mult)
    if not torch().is_grad_enabled():
        if norm_weight is not None:
            fn = ops._merge_fwd(fn, norm_weight)
        post_mix, comb_mix, layer_input = ops.mhc_pre_big_fuse(
            residual, fn, scale, base, norm_eps, pre_eps, sinkhorn_eps,
            post_mult_value, sinkhorn_repeat, n_splits)
        return layer_input, (post_mix, comb_mix)
    mixes = ops.mhc_pre_norm_fn(residual, fn, norm_weight, norm_eps,
                                 n_splits=n_splits)
    pre_mix, post_mix, comb_mix = ops.mhc_pre_split_mixes(
        mixes, scale, base, mhc_mult, post_mult_value, pre_eps)
    comb_mix = ops.sinkhorn_normalize(comb_mix, repeat=sinkhorn_repeat,
                                       eps=sinkhorn_eps)
    return ops.mhc_pre_apply_mix(residual, pre_mix), (post_mix, comb_mix)


def mhc_head(residual, fn, scale, base, *, norm_weight=None, norm_eps=1e-6,
             mhc_mult=4, pre_eps=1e-6, n_splits=16):
    """mHC's head before the LM head: (..., H) bf16, the streams of
    residual (..., mhc, H) mixed by sigmoid(normalised mixes * scale +
    base) + pre_eps, the mixes those of fn's first mhc rows (fn (mhc,
    mhc H), or 1.0's padded (mhc (mhc + 2), mhc H): the rows after mhc
    do not count); scale (1,) or a scalar tensor, base (mhc,)."""
    _check_streams(residual, mhc_mult)
    if fn.dim() == 2 and fn.shape[0] > mhc_mult:
        fn = fn[:mhc_mult]
    mixes = ops.mhc_pre_norm_fn(residual, fn, norm_weight, norm_eps,
                                 n_splits=n_splits)
    if scale.numel() == 1:
        scale = scale.reshape(1)
    mix = ops.mhc_head_compute_mix(mixes, scale, base, pre_eps)
    return ops.mhc_pre_apply_mix(residual, mix.unsqueeze(-1))


def _check_streams(residual, mhc_mult):
    if residual.dim() < 3 or residual.shape[-2] != mhc_mult:
        raise ValueError(f"argument 'residual' has shape "
                         f"{list(residual.shape)}; requires (..., mhc_mult, "
                         f"H) with mhc_mult = {mhc_mult}")


for _f in (expand_from_embedding, mhc_pre, mhc_head):
    _f.tilejit_bound = True

__all__ = ["expand_from_embedding", "mhc_head", "mhc_pre", "ops"]
