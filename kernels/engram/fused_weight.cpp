// fused_weight.cpp - fused_weight declared: bf16 weight_hidden and
// weight_embed (hc, D) to their f32 product w (hc, D), D % 256 == 0.
#include "engram/fused_weight.h"
#include "engram/reference.h"

#include "op/op.h"

namespace tilejit::engram {

const ops::OpDef &fused_weight_op() {
  using ops::Layout;
  static const ops::OpDef op = ops::make_op<FusedWeightSpec>(
      {.name = "fused_weight",
       .summary = "the Engram gate's fused weight: float(weight_hidden) * "
                  "float(weight_embed), exact",
       .tensors = {ops::input("weight_hidden", {DType::bf16}, "hc, D",
                              Layout::contiguous),
                   ops::input("weight_embed", {DType::bf16}, "hc, D",
                              Layout::contiguous),
                   ops::output("w", {DType::f32}, "hc, D", Layout::contiguous)},
       .dim_rules = {{.dim = "D", .multiple = 256}},
       .cli_shape = "hc, D",
       .default_shape = {4, 7168},
       .reference =
           [](const ops::HostCall &c) {
             return std::vector{fused_weight_ref(c.tensor("weight_hidden"),
                                                 c.tensor("weight_embed"))};
           }},
      {[](const ops::Call &c) {
         FusedWeightSpec s;
         s.vector_bytes =
             ops::vector_bytes(c, {"weight_hidden", "weight_embed", "w"});
         return s;
       },
       fused_weight_kernel});
  return op;
}
TILEJIT_REGISTER_OP(fused_weight_op);

} // namespace tilejit::engram
