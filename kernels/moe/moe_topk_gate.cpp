// moe_topk_gate.cpp - moe_topk_gate_forward declared (TileKernels 2.1's
// router): f32 logits (T, E) to expert ids and weights (T, K + S), the
// sqrt-softplus scores optionally; a warp holds block_t tokens.
#include "moe/moe_topk_gate.h"
#include "moe/gate_dsl.h"
#include "moe/reference.h"

#include "op/op.h"

#include <bit>

namespace tilejit::moe {

namespace {

int64_t shared_experts(const ops::Call &c) {
  return c.flag("use_shared_as_routed") ? c.integer("num_shared_experts") : 0;
}

void check(const ops::Call &c) {
  const std::string_view op = c.op().name;
  for (auto [a, b] : {std::pair{"to_physical_map", "logical_count"},
                      std::pair{"logical_count", "to_physical_map"},
                      std::pair{"image_bias", "image_token_mask"},
                      std::pair{"image_token_mask", "image_bias"},
                      std::pair{"fix_routing_mask", "unmapped_topk_idx"}})
    if (c.has(a) && !c.has(b))
      throw UserError(fmt::format("{}: argument '{}' is given without '{}'; "
                                  "requires both",
                                  op, a, b));
  if (c.has("force_random"))
    throw UserError(fmt::format(
        "{}: argument 'force_random' is given; requires none (its cuRAND "
        "Philox draws are not reproduced yet)",
        op));
  const int64_t shared = shared_experts(c);
  if (c.flag("use_shared_as_routed") && (shared < 1 || shared > 2))
    throw UserError(fmt::format("{}: argument 'num_shared_experts' is {} with "
                                "use_shared_as_routed; requires 1 or 2",
                                op, shared));
  if (c.integer("num_topk") + shared > 32)
    throw UserError(fmt::format("{}: arguments 'num_topk' and "
                                "'num_shared_experts' make {} slots; requires "
                                "at most 32",
                                op, c.integer("num_topk") + shared));
  if (c.has("to_physical_map") && c.dim("L") != c.dim("E") + shared)
    throw UserError(fmt::format(
        "{}: argument 'to_physical_map' has {} rows; requires E + S = {} "
        "(routed and shared experts)",
        op, c.dim("L"), c.dim("E") + shared));
}

MoeTopkGateSpec spec(const ops::Call &c) {
  MoeTopkGateSpec s;
  s.num_experts = static_cast<int32_t>(c.dim("E"));
  s.num_topk = static_cast<int32_t>(c.integer("num_topk"));
  s.num_shared = static_cast<int32_t>(shared_experts(c));
  s.mask = c.has("mask");
  s.bias = c.has("bias");
  s.image = c.has("image_bias");
  s.fix_routing = c.has("fix_routing_mask");
  s.physical_map = c.has("to_physical_map");
  s.unmapped_out = c.has("unmapped_out");
  s.scores = c.has("scores");
  // About 8 logits a thread of the one-warp block (a token a warp from 256
  // experts on), as top2_sum_gate's.
  const auto width =
      static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(c.dim("E"))));
  s.block_t = static_cast<int32_t>(std::max<int64_t>(1, 256 / width));
  s.vector_bytes = ops::vector_bytes(c, {"logits", "bias", "image_bias"});
  return s;
}

/// The biases as (T, E) rows of stride 0, so that a block's tile of them
/// reads whole vectors.
void views(const ops::Call &c, const MoeTopkGateSpec &, ops::KernelArgs &args) {
  const int64_t rows[2] = {c.dim("T"), c.dim("E")}, strides[2] = {0, 1};
  for (auto [from, to] : {std::pair{"bias", "bias_rows"},
                          std::pair{"image_bias", "image_bias_rows"}})
    if (c.has(from))
      args.tensor(to, rt::TensorView::strided(c.tensor(from).data, DType::f32,
                                              rows, strides));
}

std::vector<ref::HostTensor> reference(const ops::HostCall &c) {
  const ref::HostTensor &logits = c.tensor("logits");
  MoeTopkGateArgs a{.mask = c.given("mask"),
                    .bias = c.given("bias"),
                    .image_bias = c.given("image_bias"),
                    .image_token_mask = c.given("image_token_mask"),
                    .fix_routing_mask = c.given("fix_routing_mask"),
                    .to_physical_map = c.given("to_physical_map"),
                    .logical_count = c.given("logical_count"),
                    .unmapped_topk_idx = std::nullopt,
                    .force_random = c.given("force_random")};
  // unmapped_topk_idx is TileKernels' in/out tensor: its copy, written.
  if (c.has("unmapped_topk_idx"))
    a.unmapped_topk_idx = c.tensor("unmapped_topk_idx").clone();
  else if (c.has("unmapped_out"))
    a.unmapped_topk_idx = ref::HostTensor::zeros(
        DType::i64, {logits.size(0), c.integer("num_topk")});
  MoeTopkGateResult r = moe_topk_gate_forward_ref(
      logits, c.integer("num_topk"), c.flag("use_shared_as_routed"),
      c.integer("num_shared_experts"),
      static_cast<float>(c.real("routed_scaling_factor")), c.integer("ep_rank"),
      c.choice("scoring_func"), a);
  return {r.topk_idx, r.topk_weights,
          c.has("unmapped_out") ? *a.unmapped_topk_idx : ref::HostTensor{},
          c.has("scores") ? r.scores : ref::HostTensor{}};
}

} // namespace

const ops::OpDef &moe_topk_gate_forward_op() {
  using ops::absent_by_default, ops::optional_input, ops::Layout;
  auto flags = [](const char *name, const char *doc) {
    return absent_by_default(
        optional_input(name, {DType::boolean}, "T", Layout::contiguous, doc));
  };
  auto vector = [](const char *name, const char *doc) {
    return absent_by_default(
        optional_input(name, {DType::f32}, "E", Layout::contiguous, doc));
  };
  static const ops::OpDef op = ops::make_op<MoeTopkGateSpec>(
      {.name = "moe_topk_gate_forward",
       .summary = "TileKernels 2.1's MoE router: sqrt-softplus scores, the "
                  "top num_topk of scores + bias (or image bias), weights "
                  "over the warp's butterfly sum, shared experts, physical "
                  "map",
       .tensors =
           {ops::input("logits", {DType::f32}, "T, E", Layout::contiguous),
            flags("mask", "false: the token is not routed"),
            vector("bias", "added to the scores for the selection"),
            vector("image_bias", "the image tokens' bias"),
            flags("image_token_mask", "true: an image token"),
            flags("fix_routing_mask",
                  "true: the token's picks are unmapped_topk_idx's"),
            absent_by_default(optional_input(
                "to_physical_map", {DType::i32}, "L, C", Layout::contiguous,
                "(E + S, D): a logical expert's physical copies")),
            absent_by_default(optional_input(
                "logical_count", {DType::i32}, "L", Layout::contiguous,
                "the copies of each logical expert")),
            absent_by_default(optional_input(
                "unmapped_topk_idx", {DType::i64}, "T, num_topk",
                Layout::inner_contiguous, "the fixed-routing tokens' picks")),
            flags("force_random", "refused: cuRAND draws not reproduced"),
            ops::output("topk_idx", {DType::i64}, "", Layout::contiguous,
                        "(T, num_topk + S), -1: masked"),
            ops::output("topk_weights", {DType::f32}, "", Layout::contiguous,
                        "(T, num_topk + S)"),
            absent_by_default(ops::optional_output(
                "unmapped_out", {DType::i64}, "T, num_topk",
                Layout::inner_contiguous,
                "the picks (-1 for masked tokens); TileKernels' "
                "unmapped_topk_idx written in place")),
            absent_by_default(ops::optional_output(
                "scores", {DType::f32}, "T, E", Layout::contiguous,
                "the sqrt-softplus scores, 0 for masked tokens"))},
       .params = {ops::integer("num_topk", 8, 1, 32,
                               "experts picked a token (K)"),
                  ops::flag("use_shared_as_routed",
                            false, "append the shared experts as slots"),
                  ops::integer("num_shared_experts", 0, 0,
                               32, "S: 1 or 2 when use_shared_as_routed"),
                  ops::real("routed_scaling_factor", 1.0, 0,
                            "scales the weights"),
                  ops::integer("ep_rank", 0, 0, 1 << 20,
                               "this expert-parallel rank (the map's hash)"),
                  ops::choice("scoring_func", "sqrtsoftplus", {"sqrtsoftplus"},
                              "scores from logits")},
       .dim_rules = {{.dim = "E", .min = 4, .max = 1024, .multiple = 4},
                     {.dim = "num_topk", .at_most = "E"}},
       .cli_shape = "T, E",
       .default_shape = {4096, 256},
       .check = check,
       .shape_of = router_slots,
       .reference = reference},
      {spec, moe_topk_gate_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(moe_topk_gate_forward_op);

} // namespace tilejit::moe
