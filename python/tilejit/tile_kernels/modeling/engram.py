"""tile_kernels.modeling.engram on tilejit: TileKernels 2.1's Engram gate
layer (EngramGateFn / engram_gate, moe_engram_mhc.md §2.6 in 2.1's kv form)
as a torch autograd Function over tilejit's ops: forward fused_weight +
engram_gate_fwd (saving dot, gate_score and the rstds); backward
engram_gate_bwd + grad_w_reduce into each weight's `main_grad` when it has
one (None is returned for it), else into new f32 zeros (returned)."""
from .. import engram as _ops
from .._binding import torch

_FN = None


def _gate_fn():
    """EngramGateFn, made on first use (the package imports without
    torch)."""
    global _FN
    if _FN is not None:
        return _FN
    t = torch()

    class EngramGateFn(t.autograd.Function):
        @staticmethod
        def forward(ctx, hidden_states, kv, weight_hidden, weight_embed,
                    clamp_value, eps, image_token_mask=None):
            hc, d = hidden_states.shape[-2:]
            x = hidden_states.reshape(-1, hc, d)
            kv3 = kv.reshape(-1, hc + 1, d)
            w = _ops.fused_weight(weight_hidden, weight_embed)
            out, dot, gate, rstd_x, rstd_k = _ops.engram_gate_fwd(
                x, kv3, w, eps, clamp_value, save_for_backward=True,
                image_token_mask=image_token_mask)
            ctx.save_for_backward(x, kv3, weight_hidden, weight_embed, w,
                                  dot, gate, rstd_x, rstd_k)
            ctx.clamp_value, ctx.mask = clamp_value, image_token_mask
            ctx.shapes = (hidden_states.shape, kv.shape)
            return out.view(hidden_states.shape)

        @staticmethod
        def backward(ctx, grad_out):
            (x, kv3, weight_hidden, weight_embed, w, dot, gate, rstd_x,
             rstd_k) = ctx.saved_tensors
            hidden_shape, kv_shape = ctx.shapes
            grad_x, grad_kv, partial = _ops.engram_gate_bwd(
                grad_out.reshape(x.shape).contiguous(), x, kv3, w, dot, gate,
                rstd_x, rstd_k, ctx.clamp_value,
                image_token_mask=ctx.mask)

            def buffer(p):
                g = getattr(p, "main_grad", None)
                if g is not None:
                    return g, False
                return t.zeros(p.shape, dtype=t.float32, device=p.device), True

            gh, new_h = buffer(weight_hidden)
            ge, new_e = buffer(weight_embed)
            _ops.grad_w_reduce(partial, weight_hidden, weight_embed, gh, ge)
            return (grad_x.view(hidden_shape), grad_kv.view(kv_shape),
                    gh if new_h else None, ge if new_e else None, None, None,
                    None)

    _FN = EngramGateFn
    return _FN


def __getattr__(name):
    """EngramGateFn, as TileKernels' module has it (made on first use)."""
    if name == "EngramGateFn":
        return _gate_fn()
    raise AttributeError(name)


def engram_gate(hidden_states, kv, weight_hidden, weight_embed, clamp_value,
                eps, image_token_mask=None):
    """TileKernels 2.1's engram_gate: x + sigmoid(signed sqrt of the
    RMS-normalised, weighted x . k / sqrt(D)) * v, differentiable in
    hidden_states [*, hc, D], kv [*, (hc + 1) D] (viewed (-1, hc + 1, D))
    and the two weights (hc, D); image tokens keep x."""
    return _gate_fn().apply(hidden_states, kv, weight_hidden, weight_embed,
                            clamp_value, eps, image_token_mask)


engram_gate.tilejit_bound = True
