"""tile_kernels.engram on tilejit: the ops whose kernels run; the others
raise NotImplementedError saying so."""
from ._binding import in_place, not_bound, tk_op

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
for _name in ("engram_gate_fwd",
              "engram_gate_bwd",
              "engram_sinkhorn_momentum_update", "engram_sinkhorn_step",
              "engram_sinkhorn_step_reduce", "engram_sinkhorn_finalize"):
    globals()[_name] = not_bound(f"engram.{_name}")
del _name
