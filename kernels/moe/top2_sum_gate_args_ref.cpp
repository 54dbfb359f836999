// top2_sum_gate_args_ref.cpp - The argument checks of top2_sum_gate_ref
// (spec §1.4's constraints table, and the checks we add where the original
// has none), one UserError message per requirement.
#include "moe/check.h"
#include "moe/top2_sum_gate_args.h"

namespace tilejit::moe::detail {

namespace {

constexpr std::string_view ref_fn = "top2_sum_gate_ref";

void check_mask(std::string_view arg, const HostTensor &m, int64_t tokens) {
  check_tensor(ref_fn, arg, m, DType::boolean, 1);
  check_shape(ref_fn, arg, m, {tokens}, "(T, the rows of 'logits')");
}

void check_groups(std::string_view fn, Gate &g) {
  if (g.groups < 0 || g.topk_groups < 0 ||
      (g.groups == 0) != (g.topk_groups == 0))
    fail(fn,
         "arguments 'num_groups' and 'num_topk_groups' are {} and "
         "{}; requires both zero or both positive",
         g.groups, g.topk_groups);
  if (g.topk_groups > g.groups)
    fail(fn,
         "argument 'num_topk_groups' is {}; requires at most "
         "num_groups = {}",
         g.topk_groups, g.groups);
  if (g.groups != 0 && g.experts % g.groups != 0)
    fail(fn,
         "argument 'num_groups' is {}; requires a divisor of the "
         "{} experts",
         g.groups, g.experts);
  g.grouped = g.groups != g.topk_groups;
  if (!g.grouped)
    return;
  const int64_t group_size = g.experts / g.groups;
  if (g.groups > 32)
    fail(fn,
         "argument 'num_groups' is {}; requires at most 32 when "
         "grouping (num_groups != num_topk_groups)",
         g.groups);
  // A group's score is its top two: one expert has no second (the
  // original's reads past the group).
  if (group_size < 2)
    fail(fn,
         "argument 'num_groups' is {} ({} expert per group); requires at "
         "least 2 experts per group when grouping",
         g.groups, group_size);
  if (group_size > 32)
    fail(fn,
         "argument 'num_groups' is {} ({} experts per group); "
         "requires at most 32 experts per group when grouping",
         g.groups, group_size);
  // Not asserted by the original (spec §7.4), which would then pick
  // experts outside the kept groups; we require enough candidates.
  if (g.topk > g.topk_groups * group_size)
    fail(fn,
         "argument 'num_topk' is {}; requires at most "
         "num_topk_groups * experts per group = {}",
         g.topk, g.topk_groups * group_size);
}

void check_shared(std::string_view fn, Gate &g, bool use_shared_as_routed) {
  if (!use_shared_as_routed) {
    g.shared = 0; // as in the original: ignored unless used
    return;
  }
  if (g.shared != 1 && g.shared != 2)
    fail(fn,
         "argument 'num_shared_experts' is {}; requires 1 or 2 "
         "when use_shared_as_routed",
         g.shared);
  if (g.topk % g.shared != 0)
    fail(fn,
         "argument 'num_shared_experts' is {}; requires a "
         "divisor of num_topk = {}",
         g.shared, g.topk);
  if (g.experts % (g.topk / g.shared) != 0)
    fail(fn,
         "argument 'num_topk' is {} with {} shared experts; "
         "requires the {} experts to be a multiple of num_topk / "
         "num_shared_experts = {}",
         g.topk, g.shared, g.experts, g.topk / g.shared);
}

void check_ranks(std::string_view fn, const Gate &g, int64_t ep_rank,
                 int64_t num_ep_ranks, int64_t tp_rank, int64_t num_tp_ranks) {
  if (num_ep_ranks < 1)
    fail(fn, "argument 'num_ep_ranks' is {}; requires >= 1", num_ep_ranks);
  if (ep_rank < 0 || ep_rank >= num_ep_ranks)
    fail(fn,
         "argument 'ep_rank' is {}; requires 0 <= ep_rank < "
         "num_ep_ranks = {}",
         ep_rank, num_ep_ranks);
  if (num_tp_ranks < 1)
    fail(fn, "argument 'num_tp_ranks' is {}; requires >= 1", num_tp_ranks);
  if (tp_rank < 0 || tp_rank >= num_tp_ranks)
    fail(fn,
         "argument 'tp_rank' is {}; requires 0 <= tp_rank < "
         "num_tp_ranks = {}",
         tp_rank, num_tp_ranks);
  // (E + X) / num_ep_ranks == 0 would divide by zero in the masking.
  if (g.experts + g.extra < num_ep_ranks)
    fail(fn,
         "argument 'num_ep_ranks' is {}; requires at most the {} "
         "physical experts (E + X), one or more per rank",
         num_ep_ranks, g.experts + g.extra);
}

} // namespace

void check_gate(std::string_view fn, Gate &g, bool use_shared_as_routed,
                int64_t num_shared_experts, int64_t ep_rank,
                int64_t num_ep_ranks, int64_t tp_rank, int64_t num_tp_ranks,
                std::string_view scoring_func) {
  if (g.topk < 1 || g.topk > g.experts)
    fail(fn,
         "argument 'num_topk' is {}; requires 1 <= num_topk <= "
         "{} (the number of experts)",
         g.topk, g.experts);
  check_groups(fn, g);
  std::optional<ScoringFunc> scoring = parse_scoring_func(scoring_func);
  if (!scoring || *scoring == ScoringFunc::identity)
    fail(fn,
         "argument 'scoring_func' is '{}'; requires 'sigmoid', "
         "'sqrtsoftplus' or 'softmax'{}",
         scoring_func, scoring ? " (identity is not supported here)" : "");
  g.scoring = *scoring;
  g.shared = num_shared_experts;
  check_shared(fn, g, use_shared_as_routed);
  if (g.topk + g.shared > 32)
    fail(fn,
         "arguments 'num_topk' and 'num_shared_experts' give {} "
         "slots; requires at most 32 (one warp lane per slot)",
         g.topk + g.shared);
  if (g.shared > g.extra)
    fail(fn,
         "argument 'num_shared_experts' is {}; requires at most "
         "the {} extra experts of 'to_physical_map' (its columns - 1; "
         "0 without it)",
         g.shared, g.extra);
  check_ranks(fn, g, ep_rank, num_ep_ranks, tp_rank, num_tp_ranks);
  g.per_rank = (g.experts + g.extra) / num_ep_ranks;
}

Gate check_top2_sum_gate_args(
    const HostTensor &logits, const HostTensor &bias, int64_t num_topk,
    int64_t num_topk_groups, int64_t num_groups, bool use_shared_as_routed,
    int64_t num_shared_experts, int64_t ep_rank, int64_t num_ep_ranks,
    int64_t tp_rank, int64_t num_tp_ranks, std::string_view scoring_func,
    const std::optional<HostTensor> &mask,
    const std::optional<HostTensor> &fix_routing_mask,
    const std::optional<HostTensor> &to_physical_map,
    const std::optional<HostTensor> &logical_count,
    const std::optional<HostTensor> &unmapped_topk_idx) {
  const std::string_view fn = ref_fn;
  Gate g{};
  check_tensor(fn, "logits", logits, DType::f32, 2);
  g.tokens = logits.size(0);
  g.experts = logits.size(1);
  check_tensor(fn, "bias", bias, DType::f32, 1);
  check_shape(fn, "bias", bias, {g.experts}, "(E, the columns of 'logits')");
  if (g.experts % 4 != 0)
    fail(fn,
         "argument 'logits' has shape [{}, {}]; requires a "
         "number of experts that is a multiple of 4",
         g.tokens, g.experts);
  if (mask)
    check_mask("mask", *mask, g.tokens);
  if (to_physical_map.has_value() != logical_count.has_value())
    fail(fn,
         "argument '{}' is given without '{}'; requires both or "
         "neither",
         to_physical_map ? "to_physical_map" : "logical_count",
         to_physical_map ? "logical_count" : "to_physical_map");
  g.topk = num_topk;
  g.groups = num_groups;
  g.topk_groups = num_topk_groups;
  // The logical experts E + S the map must have rows for.
  const int64_t shared = use_shared_as_routed ? num_shared_experts : 0;
  if (to_physical_map) {
    check_tensor(fn, "to_physical_map", *to_physical_map, DType::i32, 2);
    if (to_physical_map->size(0) != g.experts + shared ||
        to_physical_map->size(1) < 1)
      fail(fn,
           "argument 'to_physical_map' has shape [{}]; requires "
           "[{}, X + 1] (E + S logical experts, X extra experts)",
           fmt::join(to_physical_map->shape(), ", "), g.experts + shared);
    g.extra = to_physical_map->size(1) - 1;
    check_tensor(fn, "logical_count", *logical_count, DType::i32, 1);
    check_shape(fn, "logical_count", *logical_count, {g.experts + shared},
                "(E + S)");
  }
  check_gate(fn, g, use_shared_as_routed, num_shared_experts, ep_rank,
             num_ep_ranks, tp_rank, num_tp_ranks, scoring_func);
  if (unmapped_topk_idx) {
    const HostTensor &u = *unmapped_topk_idx;
    check_dtype(fn, "unmapped_topk_idx", u, DType::i64);
    check_rank(fn, "unmapped_topk_idx", u, 2);
    check_shape(fn, "unmapped_topk_idx", u, {g.tokens, g.topk},
                "(T, num_topk)");
    if (g.topk > 1 && u.stride(1) != 1)
      fail(fn,
           "argument 'unmapped_topk_idx' has stride[1] = {}; "
           "requires 1",
           u.stride(1));
  }
  if (fix_routing_mask) {
    if (!unmapped_topk_idx)
      fail(fn, "argument 'fix_routing_mask' is given without "
               "'unmapped_topk_idx'; requires both");
    check_mask("fix_routing_mask", *fix_routing_mask, g.tokens);
  }
  return g;
}

} // namespace tilejit::moe::detail
