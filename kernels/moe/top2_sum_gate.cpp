// top2_sum_gate.cpp - top2_sum_gate declared: f32 logits (T, E) and bias
// (E,) to physical expert ids and weights (T, K + S); a warp holds block_t
// tokens. The argument checks on numbers are the reference's own
// (detail::check_gate).
#include "moe/top2_sum_gate.h"
#include "moe/gate_dsl.h"
#include "moe/reference.h"
#include "moe/top2_sum_gate_args.h"

#include "op/op.h"

#include <bit>

namespace tilejit::moe {

namespace {

/// The checked numbers of a call, as the reference checks them.
detail::Gate gate(const ops::Call &c) {
  detail::Gate g{};
  g.tokens = c.dim("T");
  g.experts = c.dim("E");
  g.topk = c.integer("num_topk");
  g.groups = c.integer("num_groups");
  g.topk_groups = c.integer("num_topk_groups");
  g.extra = c.has("to_physical_map") ? c.dim("C") - 1 : 0;
  detail::check_gate(c.op().name, g, c.flag("use_shared_as_routed"),
                     c.integer("num_shared_experts"), c.integer("ep_rank"),
                     c.integer("num_ep_ranks"), c.integer("tp_rank"),
                     c.integer("num_tp_ranks"), c.choice("scoring_func"));
  return g;
}

void check(const ops::Call &c) {
  const std::string_view op = c.op().name;
  for (auto [a, b] : {std::pair{"to_physical_map", "logical_count"},
                      std::pair{"logical_count", "to_physical_map"},
                      std::pair{"fix_routing_mask", "unmapped_topk_idx"}})
    if (c.has(a) && !c.has(b))
      throw UserError(fmt::format("{}: argument '{}' is given without '{}'; "
                                  "requires both",
                                  op, a, b));
  const detail::Gate g = gate(c);
  if (c.has("to_physical_map") && c.dim("L") != g.experts + g.shared)
    throw UserError(fmt::format(
        "{}: argument 'to_physical_map' has {} rows; requires E + S = {} (a "
        "row a logical expert, the shared ones too)",
        op, c.dim("L"), g.experts + g.shared));
  // The kernel ranks groups in a (groups, size) view of the row.
  if (g.grouped &&
      !std::has_single_bit(static_cast<uint64_t>(g.experts / g.groups)))
    throw UserError(fmt::format(
        "{}: argument 'num_groups' is {} ({} experts per group); requires a "
        "power of two experts per group when grouping (on the GPU)",
        op, g.groups, g.experts / g.groups));
}

/// The spec of a call `check` has passed (on every launch: nothing checked
/// again).
Top2SumGateSpec spec(const ops::Call &c) {
  const int64_t experts = c.dim("E"), groups = c.integer("num_groups"),
                topk_groups = c.integer("num_topk_groups");
  const bool grouped = groups != topk_groups;
  Top2SumGateSpec s;
  s.num_experts = static_cast<int32_t>(experts);
  s.num_topk = static_cast<int32_t>(c.integer("num_topk"));
  s.group_size = grouped ? static_cast<int32_t>(experts / groups) : 0;
  s.num_topk_groups = grouped ? static_cast<int32_t>(topk_groups) : 0;
  s.num_shared = static_cast<int32_t>(
      c.flag("use_shared_as_routed") ? c.integer("num_shared_experts") : 0);
  s.scoring =
      static_cast<int32_t>(*parse_scoring_func(c.choice("scoring_func")));
  s.mask = c.has("mask");
  s.fix_routing = c.has("fix_routing_mask");
  s.physical_map = c.has("to_physical_map");
  s.unmapped_out = c.has("unmapped_out");
  // About 8 logits a thread of the one-warp block (a token a warp from 256
  // experts on, as TileKernels': a short critical path); when grouping, at most
  // 64 of the (group, group) comparisons a thread. (Groups hold at most 32
  // experts, so both keep a warp's worth: at least 32 elements.)
  const auto width =
      static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(experts)));
  int64_t rows = 256 / width;
  if (grouped) {
    const int64_t groups = width / s.group_size;
    rows = std::min(rows, 2048 / (groups * groups));
  }
  rows = std::max<int64_t>(rows, 1);
  s.block_t = static_cast<int32_t>(std::bit_ceil(static_cast<uint64_t>(rows)));
  s.vector_bytes = ops::vector_bytes(c, {"logits", "bias"});
  return s;
}

/// bias as rows (T, E) of stride 0, so that a block's tile of it reads
/// whole vectors; the EP/TP renumbering's experts a rank: (E + X) /
/// num_ep_ranks.
void views(const ops::Call &c, const Top2SumGateSpec &, ops::KernelArgs &args) {
  const int64_t rows[2] = {c.dim("T"), c.dim("E")}, strides[2] = {0, 1};
  args.tensor("bias_rows", rt::TensorView::strided(c.tensor("bias").data,
                                                   DType::f32, rows, strides));
  const int64_t extra = c.has("to_physical_map") ? c.dim("C") - 1 : 0;
  args.scalar("per_rank", static_cast<double>((c.dim("E") + extra) /
                                              c.integer("num_ep_ranks")));
}

std::vector<ref::HostTensor> reference(const ops::HostCall &c) {
  const int64_t k = c.integer("num_topk");
  const ref::HostTensor &logits = c.tensor("logits");
  // unmapped_topk_idx is TileKernels' in/out tensor: its copy, written.
  std::optional<ref::HostTensor> unmapped;
  if (c.has("unmapped_topk_idx"))
    unmapped = c.tensor("unmapped_topk_idx").clone();
  else if (c.has("unmapped_out"))
    unmapped = ref::HostTensor::zeros(DType::i64, {logits.size(0), k});
  Top2SumGateResult r = top2_sum_gate_ref(
      logits, c.tensor("bias"), k, c.integer("num_topk_groups"),
      c.integer("num_groups"), c.flag("use_shared_as_routed"),
      c.integer("num_shared_experts"),
      static_cast<float>(c.real("routed_scaling_factor")), c.integer("ep_rank"),
      c.integer("num_ep_ranks"), c.integer("tp_rank"),
      c.integer("num_tp_ranks"), c.choice("scoring_func"), c.given("mask"),
      c.given("fix_routing_mask"), c.given("to_physical_map"),
      c.given("logical_count"), unmapped);
  return {r.topk_idx, r.topk_weights,
          c.has("unmapped_out") ? *unmapped : ref::HostTensor{}};
}

} // namespace

const ops::OpDef &top2_sum_gate_op() {
  using ops::absent_by_default, ops::optional_input, ops::Layout;
  static const ops::OpDef op = ops::make_op<Top2SumGateSpec>(
      {.name = "top2_sum_gate",
       .summary = "the MoE router: scores, group limit, top num_topk, "
                  "normalised weights, shared experts, physical map, EP/TP "
                  "mask",
       .tensors =
           {ops::input("logits", {DType::f32}, "T, E", Layout::contiguous),
            ops::input("bias", {DType::f32}, "E", Layout::contiguous),
            absent_by_default(optional_input("mask", {DType::boolean}, "T",
                                             Layout::contiguous,
                                             "false: the token is not "
                                             "routed")),
            absent_by_default(optional_input(
                "fix_routing_mask", {DType::boolean}, "T", Layout::contiguous,
                "true: the token's picks are unmapped_topk_idx's")),
            absent_by_default(optional_input(
                "to_physical_map", {DType::i32}, "L, C", Layout::contiguous,
                "(E + S, X + 1): a logical expert's physical copies")),
            absent_by_default(optional_input(
                "logical_count", {DType::i32}, "L", Layout::contiguous,
                "the copies of each logical expert, 1 to X + "
                "1")),
            absent_by_default(optional_input(
                "unmapped_topk_idx", {DType::i64}, "T, num_topk",
                Layout::inner_contiguous, "the fixed-routing tokens' picks")),
            ops::output("topk_idx", {DType::i64}, "", Layout::contiguous,
                        "(T, num_topk + S), -1: masked or another rank's"),
            ops::output("topk_weights", {DType::f32}, "", Layout::contiguous,
                        "(T, num_topk + S)"),
            absent_by_default(ops::optional_output(
                "unmapped_out", {DType::i64}, "T, num_topk",
                Layout::inner_contiguous,
                "the picks (logical experts, -1 for masked tokens); "
                "TileKernels' unmapped_topk_idx written in place"))},
       .params =
           {ops::integer("num_topk", 8, 1, 32, "experts picked a token (K)"),
            ops::integer("num_topk_groups", 4, 0, 32, "groups kept"),
            ops::integer("num_groups", 8, 0, 1024,
                         "groups of experts (0, or num_topk_groups: no "
                         "grouping)"),
            ops::flag("use_shared_as_routed", false,
                      "append the shared experts as slots"),
            ops::integer("num_shared_experts", 0, 0, 32,
                         "S: 1 or 2 when use_shared_as_routed"),
            ops::real("routed_scaling_factor", 1.0, 0, "scales the weights"),
            ops::integer("ep_rank", 0, 0, 1 << 20, "this expert-parallel rank"),
            ops::integer("num_ep_ranks", 1, 1, 1 << 20,
                         "expert-parallel ranks"),
            ops::integer("tp_rank", 0, 0, 1 << 20, "this tensor-parallel rank"),
            ops::integer("num_tp_ranks", 1, 1, 1 << 20,
                         "tensor-parallel ranks"),
            ops::choice("scoring_func", "sigmoid",
                        {"sigmoid", "sqrtsoftplus", "softmax"},
                        "scores from logits")},
       .dim_rules = {{.dim = "E", .min = 4, .max = 1024, .multiple = 4}},
       .cli_shape = "T, E",
       .default_shape = {36, 256},
       .check = check,
       .shape_of = router_slots,
       .reference = reference},
      {spec, top2_sum_gate_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(top2_sum_gate_op);

void top2_sum_gate(
    const rt::TensorView &logits, const rt::TensorView &bias,
    const rt::TensorView &mask, const rt::TensorView &fix_routing_mask,
    const rt::TensorView &to_physical_map, const rt::TensorView &logical_count,
    const rt::TensorView &unmapped_topk_idx, const rt::TensorView &topk_idx,
    const rt::TensorView &topk_weights, const rt::TensorView &unmapped_out,
    int64_t num_topk, int64_t num_topk_groups, int64_t num_groups,
    bool use_shared_as_routed, int64_t num_shared_experts,
    double routed_scaling_factor, int64_t ep_rank, int64_t num_ep_ranks,
    int64_t tp_rank, int64_t num_tp_ranks, const std::string &scoring_func,
    CUstream stream) {
  top2_sum_gate_op().call(
      {logits, bias, mask, fix_routing_mask, to_physical_map, logical_count,
       unmapped_topk_idx, topk_idx, topk_weights, unmapped_out},
      {num_topk, num_topk_groups, num_groups, use_shared_as_routed,
       num_shared_experts, routed_scaling_factor, ep_rank, num_ep_ranks,
       tp_rank, num_tp_ranks, scoring_func},
      stream);
}

} // namespace tilejit::moe
