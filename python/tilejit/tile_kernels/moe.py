"""tile_kernels.moe on tilejit: the ops whose kernels run; the others raise
NotImplementedError naming what is missing."""
from ._binding import not_bound, tk_op

topk_gate = tk_op("topk_gate", "scores, num_topk", returns="topk_idx")
normalize_weight = tk_op("normalize_weight", "topk_weights",
                         returns=("denominator", "normalized"))
mask_indices_by_tp = tk_op(
    "mask_indices_by_tp", "indices, n, num_ep_ranks, tp_rank, num_tp_ranks",
    returns="masked")
reduce_fused = not_bound(
    "moe.reduce_fused",
    "its kernel runs (tilejit.ops.reduce_fused); the TileKernels form "
    "(fp8_format, out=) is not bound yet")
for _name in ("top2_sum_gate", "topk_sum_and_topk_group_idx",
              "get_fused_mapping", "expand_to_fused",
              "expand_to_fused_with_sf", "group_count", "aux_fi",
              "inplace_unique_group_indices", "moe_topk_gate_forward",
              "moe_topk_gate_backward"):
    globals()[_name] = not_bound(f"moe.{_name}")
del _name
