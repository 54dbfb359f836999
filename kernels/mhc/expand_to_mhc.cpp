// expand_to_mhc.cpp - expand_to_mhc_fwd and expand_to_mhc_bwd declared
// (TileKernels 2.1's raw entry points, MEM §3.1): a bf16 row (..., H)
// copied into mhc streams (..., mhc, H), and the streams' gradient summed
// back in f32 (stream 0 first) and rounded to bf16.
#include "mhc/mhc_stream.h"
#include "mhc/reference.h"

#include "op/op.h"

namespace tilejit::mhc {

const ops::OpDef &expand_to_mhc_fwd_op() {
  static const ops::OpDef op =
      ops::make_op<MhcStreamSpec>(
          {.name = "expand_to_mhc_fwd",
           .summary = "a bf16 row (..., H) copied into mhc_mult streams (..., "
                      "mhc_mult, H)",
           .tensors = {ops::input("x", {DType::bf16}, "*, H",
                                  ops::Layout::contiguous),
                       ops::output("o", {DType::bf16}, "*, mhc_mult, H",
                                   ops::Layout::contiguous, "the streams")},
           .params = {ops::integer("mhc_mult", 4, 1, 16, "streams")},
           .dim_rules = {{.dim = "H", .min = 1}},
           .cli_shape = "*, H",
           .default_shape = {8192, 7168},
           .reference =
               [](const ops::HostCall &c) {
                 return std::vector{expand_to_mhc_ref(
                     c.tensor("x"), static_cast<int>(c.integer("mhc_mult")))};
               }},
          {[](const ops::Call &c) {
             return stream_spec(c, c.integer("mhc_mult"), {"x", "o"});
           },
           expand_to_mhc_fwd_kernel,
           [](const ops::Call &c, const MhcStreamSpec &s,
              ops::KernelArgs &args) {
             args.tensor("x", token_rows(c.tensor("x"), 1, 1, c.dim("H")));
             args.tensor("o", token_rows(c.tensor("o"), 2, s.mhc, c.dim("H")));
           }});
  return op;
}
TILEJIT_REGISTER_OP(expand_to_mhc_fwd_op);

const ops::OpDef &expand_to_mhc_bwd_op() {
  static const ops::OpDef op = ops::make_op<MhcStreamSpec>(
      {.name = "expand_to_mhc_bwd",
       .summary = "the streams' gradient (..., mhc, H) summed in f32 into "
                  "the row's (..., H), bf16",
       .tensors = {ops::input("o_grad", {DType::bf16}, "*, mhc, H",
                              ops::Layout::contiguous),
                   ops::output("x_grad", {DType::bf16}, "*, H",
                               ops::Layout::contiguous, "the row's gradient")},
       .dim_rules = stream_rules(),
       .cli_shape = "*, mhc, H",
       .default_shape = {8192, 4, 7168},
       .reference =
           [](const ops::HostCall &c) {
             return std::vector{expand_to_mhc_bwd_ref(c.tensor("o_grad"))};
           }},
      {[](const ops::Call &c) {
         return stream_spec(c, c.dim("mhc"), {"o_grad", "x_grad"});
       },
       expand_to_mhc_bwd_kernel,
       [](const ops::Call &c, const MhcStreamSpec &s, ops::KernelArgs &args) {
         args.tensor("o_grad",
                     token_rows(c.tensor("o_grad"), 2, s.mhc, c.dim("H")));
         args.tensor("x_grad",
                     token_rows(c.tensor("x_grad"), 1, 1, c.dim("H")));
       }});
  return op;
}
TILEJIT_REGISTER_OP(expand_to_mhc_bwd_op);

} // namespace tilejit::mhc
