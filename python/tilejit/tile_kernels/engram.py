"""tile_kernels.engram on tilejit: the ops whose kernels run; the others
raise NotImplementedError saying so."""
from ._binding import not_bound, tk_op

fused_weight = tk_op("fused_weight", "weight_hidden, weight_embed",
                     returns="w")
engram_hash = tk_op(
    "engram_hash",
    "ngram_token_ids, multipliers, vocab_sizes, offsets, "
    "image_token_mask=None",
    returns="out")
for _name in ("engram_gate_fwd",
              "engram_gate_bwd", "grad_w_reduce",
              "engram_sinkhorn_momentum_update", "engram_sinkhorn_step",
              "engram_sinkhorn_step_reduce", "engram_sinkhorn_finalize"):
    globals()[_name] = not_bound(f"engram.{_name}")
del _name
