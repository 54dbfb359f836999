// topk_gate.cpp - topk_gate declared: f32 scores (T, E) to i64 indices
// (T, num_topk); a warp holds block_t rows.
#include "moe/topk_gate.h"
#include "moe/reference.h"

#include "op/op.h"

#include <bit>

namespace tilejit::moe {

static TopkGateSpec spec(const ops::Call &c) {
  TopkGateSpec s;
  s.num_experts = static_cast<int32_t>(c.dim("E"));
  s.num_topk = static_cast<int32_t>(c.integer("num_topk"));
  // About 16 scores a thread of the one-warp block.
  const auto width =
      static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(s.num_experts)));
  s.block_t = static_cast<int32_t>(std::max<int64_t>(1, 512 / width));
  s.vector_bytes = ops::vector_bytes(c, {"scores"});
  return s;
}

const ops::OpDef &topk_gate_op() {
  static const ops::OpDef op =
      ops::make_op<TopkGateSpec>(
          {.name = "topk_gate",
           .summary =
               "indices of the num_topk largest f32 scores of each (T, E) "
               "row, descending, ties to the lower index",
           .tensors = {ops::input("scores", {DType::f32}, "T, E",
                                  ops::Layout::contiguous),
                       ops::output("topk_idx", {DType::i64}, "T, num_topk")},
           .params = {ops::integer("num_topk", 8, 1, 1024,
                                   "experts picked per token")},
           .dim_rules = {{.dim = "E", .min = 1, .max = 1024},
                         {.dim = "num_topk", .at_most = "E"}},
           .cli_shape = "T, E",
           .default_shape = {8001, 256},
           .reference =
               [](const ops::HostCall &c) {
                 return std::vector{
                     topk_gate_ref(c.tensor("scores"), c.integer("num_topk"))};
               }},
          {spec, topk_gate_kernel});
  return op;
}
TILEJIT_REGISTER_OP(topk_gate_op);

void topk_gate(const rt::TensorView &scores, int64_t num_topk,
               const rt::TensorView &topk_idx, CUstream stream) {
  topk_gate_op().call({scores, topk_idx}, {num_topk}, stream);
}

} // namespace tilejit::moe
