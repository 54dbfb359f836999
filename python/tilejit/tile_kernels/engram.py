"""tile_kernels.engram on tilejit: TileKernels 2.1's Engram ops (the gate
in 2.1's kv form)."""
from . import config
from ._binding import (Conversion, from_config, in_place, tk_op, torch,
                       want)

fused_weight = tk_op("fused_weight", "weight_hidden, weight_embed",
                     returns="w")
engram_hash = tk_op(
    "engram_hash",
    "ngram_token_ids, multipliers, vocab_sizes, offsets, "
    "image_token_mask=None",
    returns="out")
grad_w_reduce = tk_op(
    "grad_w_reduce",
    "grad_w_partial, weight_hidden, weight_embed, grad_weight_hidden, "
    "grad_weight_embed",
    convert=[in_place("grad_weight_hidden"), in_place("grad_weight_embed")],
    returns=None)


def _inplace_out(inplace, hidden_states, save_for_backward):
    """2.1's inplace: out is hidden_states, which the backward would need."""
    if not inplace:
        return None
    if save_for_backward:
        raise ValueError("argument 'inplace' is True with "
                         "save_for_backward=True; requires "
                         "save_for_backward=False (the backward needs the "
                         "original hidden_states)")
    return hidden_states


def _split_kv(kv, hidden_states):
    """2.1's kv (T, hc + 1, D) as the op's k = kv[:, :hc] and v = kv[:, hc]
    (views)."""
    shape, want = tuple(kv.shape), tuple(hidden_states.shape)
    if len(shape) != 3 or len(want) != 3 or shape != (want[0], want[1] + 1,
                                                     want[2]):
        raise ValueError(f"argument 'kv' has shape {list(shape)}; requires "
                         "(T, hc + 1, D) of hidden_states' (T, hc, D) = "
                         f"{list(want)}")
    return kv[:, :-1], kv[:, -1]


_SAVED = ("dot", "gate_score", "rstd_x", "rstd_k")
engram_gate_fwd = tk_op(
    "engram_gate_fwd",
    "hidden_states, kv, weight_fused, eps, clamp_value, "
    "save_for_backward=True, image_token_mask=None, inplace=False",
    convert=[Conversion(("inplace", "hidden_states", "save_for_backward"),
                        ("out",), _inplace_out,
                        ("inplace", "True: the output is written over "
                         "hidden_states (save_for_backward=False)", None)),
             Conversion(("kv", "hidden_states"), ("k", "v"), _split_kv,
                        ("kv", "bf16 (T, hc + 1, D): k = kv[:, :hc] and "
                         "v = kv[:, hc]", None)),
             *[want(n, ("save_for_backward",), bool) for n in _SAVED]],
    returns=("out", *_SAVED))


def _grad_kv(kv):
    """2.1's grad_kv, torch.empty_like(kv), as the op's grad_k and grad_v
    (its views; the function returns their base)."""
    grad_kv = torch().empty_like(kv)
    return grad_kv[:, :-1], grad_kv[:, -1]


engram_gate_bwd = tk_op(
    "engram_gate_bwd",
    "grad_out, hidden_states, kv, weight_fused, dot, gate_score, rstd_x, "
    "rstd_k, clamp_value, image_token_mask=None",
    convert=[Conversion(("kv", "hidden_states"), ("k", "v"), _split_kv,
                        ("kv", "bf16 (T, hc + 1, D): k = kv[:, :hc] and "
                         "v = kv[:, hc]", None)),
             Conversion(("kv",), ("grad_k", "grad_v"), _grad_kv),
             from_config("num_sms", config.get_num_sms)],
    returns=lambda args, out: (out["grad_x"], out["grad_k"]._base,
                               out["grad_w_partial"]))


def _updated(arg):
    """A tensor the op updates in place: its input and output `arg`_out."""
    return Conversion((arg,), (arg, f"{arg}_out"), lambda v: (v, v),
                      (arg, "updated in place", None))


engram_sinkhorn_momentum_update = tk_op(
    "engram_sinkhorn_momentum_update",
    "grad, momentum_buffer, beta1, nesterov=True",
    convert=[_updated("momentum_buffer")], returns="sinkhorn_input")
engram_sinkhorn_step = tk_op(
    "engram_sinkhorn_step", "matrix, row_scale, col_scale, eps",
    convert=[_updated("row_scale"),
             from_config("num_partials", lambda: 3 * config.get_num_sms())],
    returns=("row_norm", "col_sumsq_partial"))
engram_sinkhorn_step_reduce = tk_op(
    "engram_sinkhorn_step_reduce", "col_sumsq_partial, col_sumsq",
    returns=None)
engram_sinkhorn_finalize = tk_op(
    "engram_sinkhorn_finalize",
    "matrix, row_scale, col_scale, eps, alpha, out=None", returns="out")
