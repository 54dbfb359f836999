// normalize_weight.cpp - normalize_weight declared: f32 top-k weights (T, K)
// to their row sums (T,) and the rows divided by them; a thread a row.
#include "moe/normalize_weight.h"
#include "moe/reference.h"

#include "op/op.h"

namespace tilejit::moe {

static NormalizeWeightSpec spec(const ops::Call &c) {
  NormalizeWeightSpec s;
  s.topk = static_cast<int32_t>(c.dim("K"));
  if (s.topk % 4 == 0)
    s.vector_bytes = ops::vector_bytes(c, {"topk_weights", "normalized"});
  return s;
}

const ops::OpDef &normalize_weight_op() {
  static const ops::OpDef op =
      ops::make_op<NormalizeWeightSpec>(
          {.name = "normalize_weight",
           .summary = "MoE top-k weights divided by their row sum (from 1e-20, "
                      "added in order), and the sums",
           .tensors = {ops::input("topk_weights", {DType::f32}, "T, K",
                                  ops::Layout::contiguous),
                       ops::output("denominator", {DType::f32}, "T"),
                       ops::output("normalized", {DType::f32}, "T, K")},
           .dim_rules = {{.dim = "K", .min = 1, .max = 32}},
           .cli_shape = "T, K",
           .default_shape = {8192, 8},
           .reference =
               [](const ops::HostCall &c) {
                 NormalizeWeightResult r =
                     normalize_weight_ref(c.tensor("topk_weights"));
                 return std::vector{r.denominator, r.normalized};
               }},
          {spec, normalize_weight_kernel});
  return op;
}
TILEJIT_REGISTER_OP(normalize_weight_op);

void normalize_weight(const rt::TensorView &topk_weights,
                      const rt::TensorView &denominator,
                      const rt::TensorView &normalized, CUstream stream) {
  normalize_weight_op().call({topk_weights, denominator, normalized}, {},
                             stream);
}

} // namespace tilejit::moe
