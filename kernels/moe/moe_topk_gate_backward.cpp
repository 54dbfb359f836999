// moe_topk_gate_backward.cpp - moe_topk_gate_backward declared (the
// gradient of TileKernels 2.1's router): the forward's scores (T, E), its
// routed picks and weights (T, K) and the weights' gradient to the
// logits' gradient (T, E); with mask and grad_scores_sum, the auxiliary
// loss's term too. A warp holds block_t tokens.
#include "moe/moe_topk_gate_backward.h"
#include "moe/reference.h"

#include "op/op.h"

#include <bit>

namespace tilejit::moe {

namespace {

void check(const ops::Call &c) {
  const std::string_view op = c.op().name;
  for (auto [a, b] : {std::pair{"mask", "grad_scores_sum"},
                      std::pair{"grad_scores_sum", "mask"}})
    if (c.has(a) && !c.has(b))
      throw UserError(fmt::format("{}: argument '{}' is given without '{}'; "
                                  "requires both or neither",
                                  op, a, b));
  if (c.has("grad_scores_sum") &&
      (c.dim("Sq") < 1 || c.dim("T") % c.dim("Sq") != 0))
    throw UserError(fmt::format(
        "{}: argument 'grad_scores_sum' has {} rows; requires Sq >= 1 "
        "sequences dividing T = {} (the rows of 'scores')",
        op, c.dim("Sq"), c.dim("T")));
}

MoeTopkGateBackwardSpec spec(const ops::Call &c) {
  MoeTopkGateBackwardSpec s;
  s.num_experts = static_cast<int32_t>(c.dim("E"));
  s.num_topk = static_cast<int32_t>(c.dim("K"));
  s.aux = c.has("grad_scores_sum");
  // About 8 experts a thread of the one-warp block (a token a warp from
  // 256 experts on), as the forward's.
  const auto width =
      static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(c.dim("E"))));
  s.block_t = static_cast<int32_t>(std::max<int64_t>(1, 256 / width));
  s.vector_bytes = ops::vector_bytes(c, {"scores", "grad_logits"});
  return s;
}

std::vector<ref::HostTensor> reference(const ops::HostCall &c) {
  return {moe_topk_gate_backward_ref(
      c.tensor("scores"), c.tensor("topk_idx"), c.tensor("topk_weights"),
      c.tensor("grad_topk_weights"),
      static_cast<float>(c.real("routed_scaling_factor")),
      c.choice("scoring_func"), c.given("mask"), c.given("grad_scores_sum"))};
}

} // namespace

const ops::OpDef &moe_topk_gate_backward_op() {
  using ops::absent_by_default, ops::optional_input, ops::Layout;
  auto picks = [](const char *name, DType dtype, const char *doc) {
    return ops::input(name, {dtype}, "T, K", Layout::contiguous, doc);
  };
  static const ops::OpDef op = ops::make_op<MoeTopkGateBackwardSpec>(
      {.name = "moe_topk_gate_backward",
       .summary = "the gradient of TileKernels 2.1's MoE router: the "
                  "logits' gradient from the weights' (and the auxiliary "
                  "loss's), through the sqrt-softplus scores",
       .tensors =
           {ops::input("scores", {DType::f32}, "T, E", Layout::contiguous,
                       "the forward's sqrt-softplus scores"),
            picks("topk_idx", DType::i64, "the routed picks, -1: unused"),
            picks("topk_weights", DType::f32, "the forward's weights"),
            picks("grad_topk_weights", DType::f32, "their gradient"),
            absent_by_default(optional_input(
                "mask", {DType::boolean}, "T", Layout::contiguous,
                "false: the token adds no auxiliary term")),
            absent_by_default(optional_input(
                "grad_scores_sum", {DType::f32}, "Sq, E", Layout::contiguous,
                "the auxiliary loss's gradient of each sequence's score "
                "sum (token t in sequence t / (T / Sq))")),
            ops::output("grad_logits", {DType::f32}, "T, E", Layout::contiguous,
                        "the logits' gradient")},
       .params = {ops::real("routed_scaling_factor", 1.0, 0,
                            "the forward's weight scale"),
                  ops::choice("scoring_func", "sqrtsoftplus", {"sqrtsoftplus"},
                              "scores from logits")},
       .dim_rules = {{.dim = "E", .min = 1, .max = 1024},
                     {.dim = "K", .min = 1, .max = 32}},
       .cli_shape = "T, E, K",
       .default_shape = {4096, 256, 8},
       .check = check,
       .reference = reference},
      {spec, moe_topk_gate_backward_kernel});
  return op;
}
TILEJIT_REGISTER_OP(moe_topk_gate_backward_op);

} // namespace tilejit::moe
