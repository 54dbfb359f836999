"""tile_kernels.moe on tilejit: the ops whose kernels run; the others raise
NotImplementedError naming what is missing."""
from ._binding import Conversion, quant_tensor, same, tk_op, torch

topk_gate = tk_op("topk_gate", "scores, num_topk", returns="topk_idx")
normalize_weight = tk_op("normalize_weight", "topk_weights",
                         returns=("denominator", "normalized"))
mask_indices_by_tp = tk_op(
    "mask_indices_by_tp", "indices, n, num_ep_ranks, tp_rank, num_tp_ranks",
    returns="masked")
group_count = tk_op("group_count", "group_idx, num_groups", returns="counts")
aux_fi = tk_op("aux_fi", "topk_idx, num_experts, num_aux_topk", returns="fi")
inplace_unique_group_indices = tk_op(
    "inplace_unique_group_indices", "group_indices, num_groups",
    convert=[same("out", "group_indices")], returns=None)


topk_sum_and_topk_group_idx = tk_op(
    "topk_sum_and_topk_group_idx", "scores, num_topk_sum, num_topk_groups",
    returns="group_idx")
expand_to_fused = tk_op(
    "expand_to_fused", "x, token_topk_to_pos, pos_to_expert", returns="out")
expand_to_fused_with_sf = tk_op(
    "expand_to_fused_with_sf",
    "x, num_per_channels, token_topk_to_pos, pos_to_expert, "
    "use_tma_aligned_col_major_sf=False",
    convert=[quant_tensor("x", required=True)], returns=("out", "out_sf"))


def _out_dtype(fp8_format, x):
    """reduce_fused's out: x's dtype, or e4m3 for fp8_format 'e4m3'."""
    if fp8_format not in ("", "e4m3"):
        raise ValueError(f"argument 'fp8_format' is {fp8_format!r}; "
                         "requires '' or 'e4m3'")
    return torch().float8_e4m3fn if fp8_format == "e4m3" else x.dtype


reduce_fused = tk_op(
    "reduce_fused",
    "x, topk_weights, token_topk_to_pos, fp8_format='', sf=None, out=None",
    convert=[quant_tensor("x"),
             Conversion(("fp8_format", "x"), ("dtype:out",), _out_dtype)],
    returns="out")


_MAPS = ("pos_to_expert", "pos_to_token", "pos_to_token_topk",
         "token_topk_to_pos", "expert_start", "expert_end",
         "num_tokens_per_expert")
# The op's call, its maps allocated from its declaration (num_expanded_tokens
# 0: the bound, laid out by the op).
_fused_mapping = tk_op(
    "get_fused_mapping",
    "topk_idx, num_experts, num_expanded_tokens, alignment",
    name="_fused_mapping", returns=_MAPS)


def get_fused_mapping(topk_idx, num_experts, num_expanded_tokens, alignment,
                      force_no_sync=False):
    """TileKernels' get_fused_mapping, on tilejit's op get_fused_mapping:
    the fused (expert-major) layout of topk_idx (i64 (T, K), -1 or an
    expert below num_experts). Returns (pos_to_expert, pos_to_token,
    pos_to_token_topk, token_topk_to_pos, expert_start, expert_end,
    num_tokens_per_expert, num_tokens_per_expert_list), all i32 on
    topk_idx's device; each segment holds its entries in ascending
    t * K + k order.

    num_expanded_tokens 0 (without force_no_sync): the maps are sized by
    the upper bound align_down(T K + (alignment - 1) num_experts,
    alignment), the aligned counts come back to the host (a sync) as the
    list, and the pos_to_* maps are cut to their sum. Otherwise N =
    num_expanded_tokens (0: that bound, where TileKernels makes maps of no
    positions), which must hold every segment (positions past it are
    dropped: token_topk_to_pos still names them), and the list is [].
    The launch goes to the current torch CUDA stream."""
    out = _fused_mapping(topk_idx, num_experts, num_expanded_tokens,
                         alignment)
    if num_expanded_tokens != 0 or force_no_sync:
        return (*out, [])
    counts = out[6].tolist()
    n = sum(counts)
    return (out[0][:n], out[1][:n], out[2][:n], *out[3:], counts)


get_fused_mapping.tilejit_bound = True


top2_sum_gate = tk_op(
    "top2_sum_gate",
    "logits, bias, num_topk, num_topk_groups, num_groups, "
    "use_shared_as_routed, num_shared_experts, routed_scaling_factor, "
    "ep_rank, num_ep_ranks, tp_rank, num_tp_ranks, scoring_func, mask=None, "
    "fix_routing_mask=None, to_physical_map=None, logical_count=None, "
    "unmapped_topk_idx=None",
    # TileKernels parses the scoring function in any case, and writes the
    # picks into unmapped_topk_idx.
    convert=[Conversion(("scoring_func",), ("scoring_func",),
                        lambda v: v.lower() if isinstance(v, str) else v),
             same("unmapped_out", "unmapped_topk_idx")],
    returns=("topk_idx", "topk_weights"))


def _out_pair(out):
    """moe_topk_gate_forward's out: None, or the (topk_idx, topk_weights)
    pair to write."""
    if out is None:
        return None, None
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise ValueError("argument 'out' is not a (topk_idx, topk_weights) "
                         "pair; requires one, or None")
    return out[0], out[1]


moe_topk_gate_forward = tk_op(
    "moe_topk_gate_forward",
    "logits, num_topk, use_shared_as_routed, num_shared_experts, "
    "routed_scaling_factor, ep_rank, scoring_func='sqrtsoftplus', mask=None, "
    "bias=None, image_bias=None, image_token_mask=None, "
    "fix_routing_mask=None, to_physical_map=None, logical_count=None, "
    "unmapped_topk_idx=None, force_random=None, out=None, scores=None",
    convert=[Conversion(("scoring_func",), ("scoring_func",),
                        lambda v: v.lower() if isinstance(v, str) else v),
             same("unmapped_out", "unmapped_topk_idx"),
             Conversion(("out",), ("topk_idx", "topk_weights"), _out_pair)],
    returns=("topk_idx", "topk_weights"))
moe_topk_gate = moe_topk_gate_forward


moe_topk_gate_backward = tk_op(
    "moe_topk_gate_backward",
    "scores, topk_idx, topk_weights, grad_topk_weights, "
    "routed_scaling_factor, scoring_func='sqrtsoftplus', mask=None, "
    "grad_scores_sum=None, out=None",
    convert=[Conversion(("scoring_func",), ("scoring_func",),
                        lambda v: v.lower() if isinstance(v, str) else v),
             same("grad_logits", "out")],
    returns="grad_logits")
