"""tile_kernels.modeling.mhc.ops on tilejit: TileKernels 1.0's mHC autograd
functions (moe_engram_mhc.md §3.1-§3.9), each a torch autograd Function
over tilejit's mHC ops, with 1.0's gradient-sharing protocol (§3.10):
mhc_post's backward hangs the residual's gradient on the residual's storage
(`grad_from_mhc_post`), mhc_pre_apply_mix's and mhc_pre_norm_fn's backwards
add theirs into it in place (in that order, as autograd runs them) and
return None for the residual.

Where 1.0 differs on purpose: mhc_pre_norm_fn and mhc_pre_big_fuse sum the
norm's product in `n_splits` parts as asked (1.0 forced one: the same
value within TileKernels' tolerance, and the two stay bit for bit equal to
each other at the same n_splits); a backward that finds no shared buffer
(the op used without mhc_post) returns the residual's gradient instead of
failing.
"""
from ... import config
from ... import mhc as _mhc
from ..._binding import in_place, tk_op, torch

# The ops with their outputs allocated (what the functions return).
_expand_fwd = tk_op("expand_to_mhc_fwd", "x, mhc_mult", returns="o")
_expand_bwd = tk_op("expand_to_mhc_bwd", "o_grad", returns="x_grad")
_sinkhorn_fwd = tk_op("sinkhorn_normalize", "x, repeat, eps", returns="out")
_sinkhorn_bwd = tk_op("mhc_sinkhorn_bwd", "grad_output, x, repeat, eps",
                      returns="grad_input")
_merge_fwd = tk_op("mhc_fn_normw_merge_fwd", "fn, normw", returns="out_fn")
_partials = tk_op("mhc_pre_norm_fn_partials", "residual, fn, n_splits",
                  returns=("gemm_out_mul", "gemm_out_sqrsum"))
_norm_fwd = tk_op(
    "mhc_reduce_partials_and_rmsnorm_fwd",
    "out_mul_splitted, sqrsum_splitted, rms_group_size, rms_eps",
    returns=("out_mul", "sqrsum", "out"))
_norm_bwd = tk_op(
    "mhc_reduce_partials_and_rmsnorm_bwd",
    "out_grad, out_mul, sqrsum, rms_group_size, rms_eps",
    returns=("out_mul_grad", "sqrsum_grad"))
_gemm_bwd = tk_op(
    "mhc_pre_norm_fn_gemm_bwd",
    "out_mul_grad, sqrsum_grad, residual, fn, x_grad=None",
    convert=[in_place("x_grad")], returns=("x_grad_out", "fn_grad"))
_split_fwd = tk_op(
    "mhc_pre_split_mixes_fwd",
    "input_mixes, mhc_scale, mhc_base, mhc_mult, mhc_post_mult_value, "
    "mhc_pre_eps",
    returns=("pre_layer_mix", "post_layer_mix", "comb_res_mix"))
_split_bwd = tk_op(
    "mhc_pre_split_mixes_bwd",
    "pre_grad, post_grad, comb_grad, input_mixes, post_layer_mix, "
    "mhc_scale, mhc_base, mhc_post_mult_value",
    returns=("input_mixes_grad", "mhc_scale_grad", "mhc_base_grad"))
_apply_fwd = tk_op("mhc_pre_apply_mix_fwd", "x, mix", returns="o")
_head_fwd = tk_op("mhc_head_compute_mix_fwd",
                  "input_mix, mhc_scale, mhc_base, mhc_pre_eps",
                  returns="output_mix")
_head_bwd = tk_op(
    "mhc_head_compute_mix_bwd",
    "output_mix_grad, input_mix, mhc_scale, mhc_base, num_sms",
    returns=("input_mix_grad", "mhc_scale_grad_partial",
             "mhc_base_grad_partial"))
_big_fuse = tk_op(
    "mhc_pre_big_fuse_fwd",
    "gemm_out_mul, gemm_out_sqrsum, mhc_scale, mhc_base, residual, rms_eps, "
    "mhc_pre_eps, mhc_sinkhorn_eps, mhc_post_mult_value, sinkhorn_repeat, "
    "n_splits",
    returns=("post_mix", "comb_mix", "layer_input"))

# 1.0's and 2.1's forms are the same.
mhc_post_fwd = _mhc.mhc_post_fwd
mhc_multilayer_recompute = _mhc.mhc_multilayer_recompute
_SHARED = "grad_from_mhc_post"  # 1.0's attribute on the residual's storage


def _shared_grad(x):
    """The residual's gradient mhc_post's backward left on x's storage, as
    x's shape, or None."""
    g = getattr(x.untyped_storage(), _SHARED, None)
    return None if g is None else g.view(x.shape)


def _tokens(x, inner, name):
    """x (..., *inner dims) as (T, ...inner): a view, x (argument `name`)
    being contiguous."""
    if not x.is_contiguous():
        raise ValueError(f"argument '{name}' of shape {list(x.shape)} has "
                         f"strides {list(x.stride())}; requires a "
                         "contiguous tensor (as TileKernels)")
    return x.view(-1, *x.shape[x.dim() - inner:])


def mhc_post_bwd(x, residual, post_layer_mix, comb_res_mix, d_o,
                 fuse_grad_acc=True):
    """TileKernels 1.0's mhc_post_bwd: (d_x, d_residual, d_post, d_comb);
    with fuse_grad_acc, d_residual is also hung on the residual's storage
    as the buffer mhc_pre_apply_mix's and mhc_pre_norm_fn's backwards add
    into."""
    d_x, d_res, d_post, d_comb = _mhc.mhc_post_bwd(
        x, residual, post_layer_mix, comb_res_mix, d_o.contiguous())
    if fuse_grad_acc:
        setattr(residual.untyped_storage(), _SHARED, d_res)
    return d_x, d_res, d_post, d_comb


_FNS = None


def _fns():
    """The autograd Functions, made on first use (the package imports
    without torch)."""
    global _FNS
    if _FNS is not None:
        return _FNS
    t = torch()
    Function = t.autograd.Function

    class ExpandToMHCFn(Function):
        @staticmethod
        def forward(ctx, hidden, mhc_mult, out):
            if out is None:
                return _expand_fwd(hidden, mhc_mult)
            _mhc.expand_to_mhc_fwd(hidden, out)
            return out

        @staticmethod
        def backward(ctx, out_grad):
            return _expand_bwd(out_grad.contiguous()), None, None

    class SinkhornNormalize(Function):
        @staticmethod
        def forward(ctx, x, repeat, eps):
            ctx.save_for_backward(x)
            ctx.repeat, ctx.eps = repeat, eps
            return _sinkhorn_fwd(x, repeat, eps)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return (_sinkhorn_bwd(grad.contiguous(), x, ctx.repeat, ctx.eps),
                    None, None)

    class MHCFnNormwMerge(Function):
        @staticmethod
        def forward(ctx, fn, normw):
            ctx.main = (getattr(fn, "main_grad", None),
                        getattr(normw, "main_grad", None))
            ctx.save_for_backward(fn, normw)
            return _merge_fwd(fn, normw)

        @staticmethod
        def backward(ctx, out_fn_grad):
            fn, normw = ctx.saved_tensors
            fn_main, normw_main = ctx.main
            fn_grad = t.zeros_like(fn) if fn_main is None else fn_main
            normw_grad = t.zeros_like(normw) if normw_main is None \
                else normw_main
            _mhc.mhc_fn_normw_merge_bwd(fn, normw, out_fn_grad.contiguous(),
                                        fn_grad, normw_grad)
            return (None if fn_main is not None else fn_grad,
                    None if normw_main is not None else normw_grad)

    class MHCPreNormFn(Function):
        @staticmethod
        def forward(ctx, x, fn, norm_eps, fuse_grad_acc, n_splits):
            rows, kd = fn.shape
            if x.dim() < 2 or x.shape[-1] * x.shape[-2] != kd:
                raise ValueError(
                    f"argument 'mhc_fn' has shape {list(fn.shape)}; "
                    "requires (mhc * (mhc + 2), mhc * H) of residual's "
                    f"(..., mhc, H) = {list(x.shape)}")
            x3 = _tokens(x, 2, "residual")
            mul, sq = _partials(x3, fn, n_splits)
            splits, tokens = sq.shape
            out_mul, sqrsum, out = _norm_fwd(
                mul.view(splits, tokens, 1, rows),
                sq.view(splits, tokens, 1), kd, norm_eps)
            ctx.save_for_backward(x, fn, out_mul, sqrsum)
            ctx.norm_eps, ctx.fuse_grad_acc = norm_eps, fuse_grad_acc
            return out.view(*x.shape[:-2], rows)

        @staticmethod
        def backward(ctx, out_grad):
            x, fn, out_mul, sqrsum = ctx.saved_tensors
            rows, kd = fn.shape
            mul_grad, sq_grad = _norm_bwd(
                out_grad.reshape(-1, rows).contiguous(), out_mul, sqrsum, kd,
                ctx.norm_eps)
            shared = _shared_grad(x) if ctx.fuse_grad_acc else None
            x3 = _tokens(x, 2, "residual")
            x_grad, fn_grad = _gemm_bwd(
                mul_grad.view(-1, rows), sq_grad.view(-1), x3, fn,
                None if shared is None else shared.view(x3.shape))
            if shared is not None:
                # The last of the residual's consumers: the buffer is done.
                delattr(x.untyped_storage(), _SHARED)
                return None, fn_grad, None, None, None
            return x_grad.view(x.shape), fn_grad, None, None, None

    class MHCPreSplitMixes(Function):
        @staticmethod
        def forward(ctx, input_mixes, mhc_scale, mhc_base, mhc_mult,
                    mhc_post_mult_value, mhc_pre_eps):
            pre, post, comb = _split_fwd(input_mixes, mhc_scale, mhc_base,
                                         mhc_mult, mhc_post_mult_value,
                                         mhc_pre_eps)
            ctx.save_for_backward(input_mixes, post, mhc_scale, mhc_base)
            ctx.post_mult = mhc_post_mult_value
            return pre, post, comb

        @staticmethod
        def backward(ctx, pre_grad, post_grad, comb_grad):
            input_mixes, post, scale, base = ctx.saved_tensors
            in_grad, scale_grad, base_grad = _split_bwd(
                pre_grad.contiguous(), post_grad.contiguous(),
                comb_grad.contiguous(), input_mixes, post, scale, base,
                ctx.post_mult)
            return in_grad, scale_grad, base_grad, None, None, None

    class MHCPreApplyMix(Function):
        @staticmethod
        def forward(ctx, x, mix, out):
            ctx.save_for_backward(x, mix)
            if out is None:
                return _apply_fwd(x, mix)
            _mhc.mhc_pre_apply_mix_fwd(x, mix, out)
            return out

        @staticmethod
        def backward(ctx, o_grad):
            x, mix = ctx.saved_tensors
            shared = _shared_grad(x)
            x_grad = t.zeros_like(x) if shared is None else shared
            mix_grad = _mhc.mhc_pre_apply_mix_bwd(o_grad.contiguous(), x, mix,
                                                  x_grad)
            return None if shared is not None else x_grad, mix_grad, None

    class MHCPost(Function):
        @staticmethod
        def forward(ctx, x, residual, post_layer_mix, comb_res_mix, out):
            ctx.save_for_backward(x, residual, post_layer_mix, comb_res_mix)
            return mhc_post_fwd(x, residual, post_layer_mix, comb_res_mix,
                                out)

        @staticmethod
        def backward(ctx, d_o):
            return (*mhc_post_bwd(*ctx.saved_tensors, d_o), None)

    class MHCHeadComputeMix(Function):
        @staticmethod
        def forward(ctx, input_mix, mhc_scale, mhc_base, mhc_pre_eps):
            ctx.save_for_backward(input_mix, mhc_scale, mhc_base)
            return _head_fwd(input_mix, mhc_scale, mhc_base, mhc_pre_eps)

        @staticmethod
        def backward(ctx, out_grad):
            input_mix, scale, base = ctx.saved_tensors
            in_grad, scale_part, base_part = _head_bwd(
                out_grad.contiguous(), input_mix, scale, base,
                config.get_num_sms())
            return (in_grad, scale_part.sum(0).view(scale.shape),
                    base_part.sum(0), None)

    class _Fns:
        pass

    for c in (ExpandToMHCFn, SinkhornNormalize, MHCFnNormwMerge,
              MHCPreNormFn, MHCPreSplitMixes, MHCPreApplyMix, MHCPost,
              MHCHeadComputeMix):
        assert c.__name__ in _CLASSES
        setattr(_Fns, c.__name__, c)
    _FNS = _Fns
    return _FNS


_CLASSES = ("ExpandToMHCFn", "SinkhornNormalize", "MHCFnNormwMerge",
            "MHCPreNormFn", "MHCPreSplitMixes", "MHCPreApplyMix", "MHCPost",
            "MHCHeadComputeMix")


def __getattr__(name):
    """The autograd Functions by name (made on first use, so only those
    names need torch: the import system's own lookups, e.g. __path__ for
    `from ... import`, get AttributeError)."""
    if name not in _CLASSES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(_fns(), name)


def expand_to_mhc(hidden, mhc_mult, out=None):
    """hidden (..., H) bf16 as (..., mhc_mult, H), each stream a copy;
    the gradient is the streams' sum (f32, rounded to bf16)."""
    return _fns().ExpandToMHCFn.apply(hidden, mhc_mult, out)


def sinkhorn_normalize(x, repeat=10, eps=1e-6):
    """Sinkhorn normalisation of f32 (..., n, n) matrices (row softmax plus
    eps, then alternating column and row normalisations)."""
    flat = x.contiguous().view(-1, *x.shape[-2:])
    return _fns().SinkhornNormalize.apply(flat, repeat, eps).view(x.shape)


def mhc_pre_norm_fn(residual, mhc_fn, mhc_norm_weight, mhc_norm_eps,
                    fuse_grad_acc=True, n_splits=16):
    """The RMS-normalised product of residual (..., mhc, H) bf16 and the
    tf32-rounded mhc_fn (M3, mhc H) f32 (times mhc_norm_weight when given),
    f32 (..., M3); the product summed in n_splits parts (16 must divide
    mhc H into multiples of 8). fuse_grad_acc: the residual's gradient is
    added into mhc_post's shared buffer when there is one."""
    if mhc_norm_weight is not None:
        mhc_fn = _fns().MHCFnNormwMerge.apply(mhc_fn, mhc_norm_weight)
    return _fns().MHCPreNormFn.apply(residual, mhc_fn, mhc_norm_eps,
                                     fuse_grad_acc, n_splits)


def mhc_pre_split_mixes(input_mixes, mhc_scale, mhc_base, mhc_mult,
                        mhc_post_mult_value, mhc_pre_eps):
    """(pre (..., mhc, 1), post (..., mhc, 1), comb logits (..., mhc, mhc))
    of input_mixes (..., mhc (mhc + 2)) f32."""
    return _fns().MHCPreSplitMixes.apply(input_mixes, mhc_scale, mhc_base,
                                         mhc_mult, mhc_post_mult_value,
                                         mhc_pre_eps)


def mhc_pre_apply_mix(x, mix, out=None):
    """bf16 (..., H): sum over m of mix[m] x[m] (an f32 fma chain) of x
    (..., mhc, H) bf16 and mix (..., mhc, 1) f32."""
    return _fns().MHCPreApplyMix.apply(x, mix, out)


def mhc_post(x, residual, post_layer_mix, comb_res_mix, out=None):
    """The residual's next state, bf16 (..., mhc, H): post[o] x + sum_i
    comb[i, o] residual[i]; its backward starts the residual's shared
    gradient buffer."""
    return _fns().MHCPost.apply(x, residual, post_layer_mix, comb_res_mix,
                                out)


def mhc_head_compute_mix(input_mix, mhc_scale, mhc_base, mhc_pre_eps):
    """sigmoid(input_mix * scale + base) + mhc_pre_eps of f32 (..., mhc)."""
    return _fns().MHCHeadComputeMix.apply(input_mix, mhc_scale, mhc_base,
                                          mhc_pre_eps)


def mhc_pre_big_fuse(residual, fn, mhc_scale, mhc_base, rms_eps,
                     mhc_pre_eps, mhc_sinkhorn_eps, mhc_post_mult_value,
                     sinkhorn_repeat, n_splits=16):
    """mHC's pre step for inference, (post_mix (..., mhc, 1), comb_mix
    (..., mhc, mhc), layer_input (..., H)): bit for bit the chain
    mhc_pre_norm_fn (fuse_grad_acc=False, the same n_splits) ->
    mhc_pre_split_mixes -> sinkhorn_normalize -> mhc_pre_apply_mix, in two
    launches after the norm's product."""
    mhc, h = residual.shape[-2:]
    outer = residual.shape[:-2]
    x3 = _tokens(residual, 2, "residual")
    mul, sq = _partials(x3, fn, n_splits)
    post, comb, layer_input = _big_fuse(
        mul, sq, mhc_scale, mhc_base, x3, rms_eps, mhc_pre_eps,
        mhc_sinkhorn_eps, mhc_post_mult_value, sinkhorn_repeat,
        mul.shape[0])
    return (post.view(*outer, mhc, 1), comb.view(*outer, mhc, mhc),
            layer_input.view(*outer, h))


for _f in (expand_to_mhc, sinkhorn_normalize, mhc_pre_norm_fn,
           mhc_pre_split_mixes, mhc_pre_apply_mix, mhc_post, mhc_post_bwd,
           mhc_head_compute_mix, mhc_pre_big_fuse):
    _f.tilejit_bound = True

__all__ = ["expand_to_mhc", "mhc_head_compute_mix",
           "mhc_multilayer_recompute", "mhc_post", "mhc_post_bwd",
           "mhc_post_fwd", "mhc_pre_apply_mix", "mhc_pre_big_fuse",
           "mhc_pre_norm_fn", "mhc_pre_split_mixes", "sinkhorn_normalize"]
