"""tile_kernels.quant on tilejit: TileKernels' names, signatures, defaults
and returns (2.1's forms, which extend 1.0's: `out=` buffers, use_e4m3_sf,
stochastic_cast; 1.0's x_block_size of the sf-only and precomputed-sf forms
as a keyword that must be None, as 1.0 required)."""
from . import _binding, config
from ._binding import (ALLOCATE, Conversion, derive, from_config,
                       must_be_none, none_as, out_dtype, out_pair,
                       pair, quant_tensor, same, tk_op, want)

_FLAGS = ("use_tma_aligned_col_major_sf=False, round_sf=False, "
          "use_packed_ue8m0=False")
_NO_INPUT_SF = "an input SF is not supported here, as in TileKernels"

per_token_cast = tk_op(
    "per_token_cast",
    f"x, fmt, num_per_channels, x_block_size=None, {_FLAGS}, "
    "use_e4m3_sf=False, stochastic_cast=False, out=None",
    convert=[quant_tensor("x"),
             pair("x_block_size", "x_block_m", "x_block_k", none=(0, 0)),
             out_pair("out", "out", "out_sf")],
    returns=("out", "out_sf"))
per_token_cast_with_sf_only = tk_op(
    "per_token_cast_with_sf_only",
    f"x, fmt, num_per_channels, {_FLAGS}, use_e4m3_sf=False, out_sf=None, "
    "*, x_block_size=None",
    convert=[must_be_none("x_block_size", _NO_INPUT_SF)],
    returns="out_sf")
per_token_cast_with_precomputed_sf = tk_op(
    "per_token_cast_with_precomputed_sf",
    f"x, fmt, num_per_channels, sf, {_FLAGS}, use_e4m3_sf=False, out=None, "
    "*, x_block_size=None",
    convert=[must_be_none("x_block_size", _NO_INPUT_SF)],
    returns="out")
per_block_cast = tk_op(
    "per_block_cast", f"x, fmt, block_size, {_FLAGS}, out=None",
    convert=[pair("block_size", "bm", "bk"), out_pair("out", "out", "out_sf")],
    returns=("out", "out_sf"))
per_block_cast_with_sf_only = tk_op(
    "per_block_cast_with_sf_only",
    f"x, fmt, block_size, {_FLAGS}, out_sf=None",
    convert=[pair("block_size", "bm", "bk")], returns="out_sf")
per_block_cast_with_precomputed_sf = tk_op(
    "per_block_cast_with_precomputed_sf",
    f"x, fmt, block_size, sf, {_FLAGS}, out=None",
    convert=[pair("block_size", "bm", "bk")], returns="out")
per_block_cast_lossless = tk_op(
    "per_block_cast_lossless",
    f"x, fmt, x_block_size, out_block_size, {_FLAGS}",
    convert=[quant_tensor("x", "x_data", "x_sf", required=True),
             pair("x_block_size", "x_bm", "x_bk"),
             pair("out_block_size", "out_bm", "out_bk")],
    returns=("out", "out_sf"))
per_channel_cast = tk_op(
    "per_channel_cast",
    "x, fmt, num_per_tokens, round_sf=False, num_per_channels=None, "
    "use_packed_ue8m0=False",
    convert=[quant_tensor("x"), none_as("num_per_channels", 0)],
    returns=("out", "out_sf"))
per_channel_cast_fused = tk_op(
    "per_channel_cast_fused",
    "x, fmt, num_per_tokens, round_sf=False, num_per_channels=None, "
    "pos_to_token=None",
    convert=[quant_tensor("x"), none_as("num_per_channels", 0)],
    returns=("out", "out_sf"))
per_channel_cast_and_transpose = tk_op(
    "per_channel_cast_and_transpose",
    "x, fmt, num_per_tokens, round_sf=False", returns=("out", "out_sf"))
_OUT_FMT = {"bf16": "bfloat16", "fp32": "float32"}
cast_back = tk_op(
    "cast_back", "x, fmt, x_block_size, x_special_fmt=None",
    convert=[quant_tensor("x", "x_data", "x_sf", required=True),
             pair("x_block_size", "bm", "bk"),
             none_as("x_special_fmt", "none"),
             out_dtype("out", "fmt", _OUT_FMT)],
    returns="out")
per_token_cast_back = tk_op(
    "per_token_cast_back", "x, fmt, num_per_channels, x_special_fmt=None",
    convert=[quant_tensor("x", "x_data", "x_sf", required=True),
             none_as("x_special_fmt", "none"),
             out_dtype("out", "fmt", _OUT_FMT)],
    returns="out")
cast = tk_op("cast", "x, dtype, stochastic_rounding=False",
             convert=[out_dtype("out", "dtype")], returns="out")
per_token_cast_and_cast_back = tk_op(
    "per_token_cast_and_cast_back",
    "x, fmt, num_per_channels, round_sf=False, use_e4m3_sf=False",
    convert=[same("out", "x")], returns=None)
unpack_from_e2m1fn_x2 = tk_op(
    "unpack_from_e2m1fn_x2", "x, out_dtype=torch.float32",
    convert=[out_dtype("out", "out_dtype")], returns="out")

# --- SwiGLU: TileKernels 2.1's forms (the psum row layout). 1.0's forms of
# swiglu_forward_and_per_token_cast and swiglu_backward_and_per_token_cast
# reused their positional arguments with other meanings, so one function
# cannot take both: 1.0's are tilejit.tile_kernels.v1.quant's.

_SWIGLU_21 = [none_as("routed_scaling_factor", 0.0),
              none_as("clamp_value", 0.0),
              from_config("token_alignment", config.get_token_alignment)]

swiglu_forward = tk_op(
    "swiglu_forward",
    "x, fmt, psum_num_tokens_per_expert=None, topk_weights=None, "
    "routed_scaling_factor=None, clamp_value=None, clamped_count=None",
    convert=_SWIGLU_21, returns="out")
swiglu_forward_and_per_token_cast = tk_op(
    "swiglu_forward_and_per_token_cast_21",
    "x, fmt, num_per_channels, psum_num_tokens_per_expert=None, "
    f"topk_weights=None, routed_scaling_factor=None, {_FLAGS}, "
    "clamp_value=None, clamped_count=None",
    name="swiglu_forward_and_per_token_cast", convert=_SWIGLU_21,
    returns=("out", "out_sf"))


def _backward_returns(args, out):
    """TileKernels 2.1's order: x_grad, then (x_grad_fp8, x_grad_sf) for the
    cast form, weight_grad with topk_weights, act_out with do_recompute."""
    r = [out["x_grad"]]
    if "x_grad_fp8" in out:
        r.append((out["x_grad_fp8"], out["x_grad_sf"]))
    if args["topk_weights"] is not None:
        r.append(out["weight_grad"])
    if args["do_recompute"]:
        r.append(out["act_out"])
    return tuple(r)


_BACKWARD_21 = _SWIGLU_21 + [
    want("weight_grad", ("topk_weights",), lambda w: w is not None),
    want("act_out", ("do_recompute",), bool)]
swiglu_backward = tk_op(
    "swiglu_backward",
    "x, act_x_grad, fmt, psum_num_tokens_per_expert=None, "
    "topk_weights=None, routed_scaling_factor=None, clamp_value=None, "
    "do_recompute=False",
    convert=_BACKWARD_21, returns=_backward_returns)
swiglu_backward_and_per_token_cast = tk_op(
    "swiglu_backward_and_per_token_cast_21",
    "x, act_x_grad, fmt, num_per_channels, psum_num_tokens_per_expert=None, "
    f"topk_weights=None, routed_scaling_factor=None, {_FLAGS}, "
    "clamp_value=None, do_recompute=False",
    name="swiglu_backward_and_per_token_cast",
    convert=[quant_tensor("x", required=True),
             derive("x_sf_group", ("x", "x_sf"),
                    lambda x, sf: x.shape[-1] // sf.shape[-1])]
    + _BACKWARD_21,
    returns=_backward_returns)
swiglu_forward_and_per_channel_cast_and_transpose = tk_op(
    "swiglu_forward_and_per_channel_cast_and_transpose",
    "x, fmt, num_per_tokens, round_sf=False, without_transpose=False, "
    "swiglu_clamp_value=None",
    convert=[none_as("swiglu_clamp_value", 0.0)], returns=("out", "out_sf"))

_transpose_weight_sf = tk_op(
    "batched_transpose_weight_sf", "sf, block_size, transpose_sf1, out=None",
    name="batched_transpose_weight_sf",
    convert=[out_pair("out", "sf0", "sf1")], returns=("sf0", "sf1"))


def batched_transpose_weight_sf(sf, block_size, transpose_sf1s, outs):
    """TileKernels 2.1's batched_transpose_weight_sf: per weight (an f32
    (Nn, Nk) or (G, Nn, Nk) of power-of-two block scales), its packed UE8M0
    (sf0, sf1), written into outs[i] when given. One launch a weight, each
    output its own allocation (TileKernels pools them in one launch and one
    allocation; the values and layouts are the same)."""
    if not len(sf) == len(transpose_sf1s) == len(outs):
        raise ValueError(f"arguments 'sf', 'transpose_sf1s' and 'outs' have "
                         f"{len(sf)}, {len(transpose_sf1s)} and {len(outs)} "
                         "items; requires as many each")
    result = []
    for s, transpose_sf1, out in zip(sf, transpose_sf1s, outs):
        flat = len(s.shape) == 2
        if flat:  # as one group
            s = s.unsqueeze(0)
            out = None if out is None else tuple(
                None if o is None else o.unsqueeze(0) for o in out)
        sf0, sf1 = _transpose_weight_sf(s, block_size, transpose_sf1, out)
        result.append((sf0.squeeze(0), sf1.squeeze(0)) if flat else
                      (sf0, sf1))
    return result


def _residual_out(residual, residual_out):
    """residual_out is written (allocated unless given) when residual is."""
    if residual is None:
        return None
    return ALLOCATE if residual_out is None else residual_out


norm_forward = tk_op(
    "norm_forward",
    "x, weight, eps, residual=None, out_scale=1.0, out=None, "
    "residual_out=None, with_rstd=False",
    convert=[Conversion(("residual", "residual_out"), ("residual_out",),
                        _residual_out),
             want("rstd", ("with_rstd",), bool)],
    returns=lambda args, out: (
        out["out"], out.get("rstd"),
        out["residual_out"] if args["residual"] is not None else args["x"]))


def _out_bf16(with_out_bf16, out_bf16):
    """out_bf16 is written (allocated unless given) with with_out_bf16."""
    if not with_out_bf16:
        if out_bf16 is not None:
            raise ValueError("argument 'out_bf16' is given while "
                             "with_out_bf16 is False; requires "
                             "with_out_bf16=True")
        return None
    return ALLOCATE if out_bf16 is None else out_bf16


_norm_cast = tk_op(
    "norm_forward_and_per_token_cast",
    "x, weight, eps, fmt='e4m3', num_per_channels=32, residual=None, "
    f"out_scale=1.0, {_FLAGS}, with_out_bf16=False, out=None, "
    "out_bf16=None, residual_out=None, mega_moe_sf=None, mega_moe_block_m=0, "
    "with_rstd=False",
    name="norm_forward_and_per_token_cast",
    convert=[out_pair("out", "out", "out_sf"),
             Conversion(("with_out_bf16", "out_bf16"), ("out_bf16",),
                        _out_bf16),
             Conversion(("residual", "residual_out"), ("residual_out",),
                        _residual_out),
             want("rstd", ("with_rstd",), bool)],
    returns=lambda args, out: (
        (out["out"], out["out_sf"]), out.get("out_bf16"), out.get("rstd"),
        out["residual_out"] if args["residual"] is not None else args["x"]))


def _rows(name, t, rows):
    """A given (B, T, ...) buffer as (B * T, ...) rows, the same memory."""
    if t is None:
        return None
    if not t.is_contiguous():
        raise ValueError(f"argument '{name}' has strides {tuple(t.stride())}"
                         "; requires a contiguous tensor (a 3-D x with "
                         "row-major scales)")
    return t.view(rows, *t.shape[2:])


def _norm_cast_3d(x, weight, eps, fmt, num_per_channels, residual, out_scale,
                  col_major, round_sf, packed, with_out_bf16, out, out_bf16,
                  residual_out, with_rstd):
    """A 3-D x: with row-major scales ((B, T, nK), the rows' (B * T, nK))
    one call over its B * T rows; with column-major ones (a column a batch,
    strides (nK' * align(T, 4), 1, align(T, 4)), nK' the words of packed
    ones) one call a batch into views of the outputs."""
    torch = _binding.torch()
    b, t, h = x.shape
    if out is not None and (not isinstance(out, (tuple, list)) or
                            len(out) != 2):
        raise ValueError(f"argument 'out' is {out!r}; requires None or a "
                         "(data, sf) pair of tensors or None")
    out = (None, None) if out is None else tuple(out)
    if not col_major:
        n = b * t
        (q, sf), ob, rstd, ni = _norm_cast(
            x.reshape(n, h), weight, eps, fmt, num_per_channels,
            None if residual is None else residual.reshape(n, h), out_scale,
            False, round_sf, packed, with_out_bf16,
            (_rows("out", out[0], n), _rows("out", out[1], n)),
            _rows("out_bf16", out_bf16, n),
            _rows("residual_out", residual_out, n), with_rstd=with_rstd)

        def back(v, given=None):
            return given if given is not None else (
                None if v is None else v.view(b, t, *v.shape[1:]))
        return ((back(q, out[0]), back(sf, out[1])), back(ob, out_bf16),
                back(rstd), x if residual is None else back(ni, residual_out))
    groups, pad = (h + 31) // 32, (t + 3) // 4 * 4
    words = (groups + 3) // 4 if packed else groups
    q = out[0] if out[0] is not None else torch.empty(
        (b, t, h), dtype=torch.float8_e4m3fn, device=x.device)
    sf = out[1] if out[1] is not None else torch.empty_strided(
        (b, t, words), (words * pad, 1, pad),
        dtype=torch.int32 if packed else torch.float32, device=x.device)
    if with_out_bf16 and out_bf16 is None:
        out_bf16 = torch.empty((b, t, h), dtype=torch.bfloat16,
                               device=x.device)
    if residual is not None and residual_out is None:
        residual_out = torch.empty_like(x)
    rstd = (torch.empty((b, t), dtype=torch.float32, device=x.device)
            if with_rstd else None)
    for i in range(b):
        def at(v):
            return None if v is None else v[i]
        _, _, r, _ = _norm_cast(
            x[i], weight, eps, fmt, num_per_channels, at(residual), out_scale,
            True, round_sf, packed, with_out_bf16, (q[i], sf[i]),
            at(out_bf16), at(residual_out), with_rstd=with_rstd)
        if rstd is not None:
            rstd[i].copy_(r)
    return ((q, sf), out_bf16, rstd, x if residual is None else residual_out)


def norm_forward_and_per_token_cast(
        x, weight, eps, fmt='e4m3', num_per_channels=32, residual=None,
        out_scale=1.0, use_tma_aligned_col_major_sf=False, round_sf=False,
        use_packed_ue8m0=False, with_out_bf16=False, out=None, out_bf16=None,
        residual_out=None, mega_moe_sf=None, mega_moe_block_m=0,
        with_rstd=False):
    args = (x, weight, eps, fmt, num_per_channels, residual, out_scale,
            use_tma_aligned_col_major_sf, round_sf, use_packed_ue8m0,
            with_out_bf16, out, out_bf16, residual_out)
    if getattr(x, "dim", lambda: 2)() == 3:
        if mega_moe_sf is not None or mega_moe_block_m != 0:
            raise ValueError("argument 'mega_moe_sf' is given with a 3-D x; "
                             "requires a 2-D x (T, H), as TileKernels")
        return _norm_cast_3d(*args, with_rstd)
    return _norm_cast(*args, mega_moe_sf=_mega_rows(
        mega_moe_sf, mega_moe_block_m, x.shape[0]),
        mega_moe_block_m=mega_moe_block_m, with_rstd=with_rstd)


def _mega_rows(mega_moe_sf, block_m, tokens):
    """TileKernels' mega_moe_sf, an int32 (T, H / 128) of strides (1, R),
    as the rows its kernel writes: (ceil(T / bm) align(bm, 128), H / 128),
    the same memory (R at least that many rows, as TileKernels requires)."""
    if mega_moe_sf is None or block_m <= 0:
        return mega_moe_sf
    rows = -(-tokens // block_m) * (-(-block_m // 128) * 128)
    stride = tuple(mega_moe_sf.stride())
    if len(stride) != 2 or stride[0] != 1 or stride[1] < rows:
        raise ValueError(f"argument 'mega_moe_sf' has strides {stride}; "
                         f"requires (1, R) with R >= {rows} (ceil(T / bm) "
                         "align(bm, 128) rows)")
    return _binding.torch().as_strided(
        mega_moe_sf, (rows, mega_moe_sf.shape[1]), (1, stride[1]),
        mega_moe_sf.storage_offset())


norm_forward_and_per_token_cast.__doc__ = _norm_cast.__doc__ + """

A 3-D x (B, T, H) takes one launch with row-major scales ((B, T, nK)),
one a batch with column-major ones (each batch's column padded to
align(T, 4)). mega_moe_sf (2-D x, packed scales, H a multiple of 128): an
int32 (T, H / 128) of strides (1, R), R >= ceil(T / bm) align(bm, 128),
whose rows the MoE kernel reads get the packed scales again."""
norm_forward_and_per_token_cast.tilejit_bound = True


def _weight_grad(x, weight, weight_grad):
    """weight_grad accumulated in place, else a new one of the weight's
    dtype (none without a weight); the op's weight_grad_out and its dtype."""
    if weight_grad is not None:
        return weight_grad, weight_grad.dtype
    if weight is None:
        return None, x.dtype
    return ALLOCATE, weight.dtype


norm_backward = tk_op(
    "norm_backward",
    "out_grad, x, weight, rstd, residual_out_grad=None, out_scale=1.0, "
    "weight_grad=None",
    convert=[Conversion(("x", "weight", "weight_grad"),
                        ("weight_grad_out", "dtype:weight_grad_out"),
                        _weight_grad,
                        ("weight_grad", "None, or a buffer the weight's "
                         "gradient is added to in place", None))],
    returns=("x_grad", "weight_grad_out"))


batched_transpose_weight_sf.tilejit_bound = True
