// mhc_pre_apply_mix.cpp - mhc_pre_apply_mix_fwd declared (TileKernels
// 2.1's raw entry point, MEM §3.5): the layer input (..., H) = bf16 of the
// fma chain over the streams of x (..., mhc, H) with mix (..., mhc, 1).
#include "mhc/mhc_stream.h"
#include "mhc/reference.h"

#include "op/op.h"

namespace tilejit::mhc {

const ops::OpDef &mhc_pre_apply_mix_fwd_op() {
  static const ops::OpDef op =
      ops::make_op<MhcStreamSpec>(
          {.name = "mhc_pre_apply_mix_fwd",
           .summary = "the layer input: the mhc streams of x mixed by mix (an "
                      "f32 fma chain from stream 0), bf16",
           .tensors = {ops::input("x", {DType::bf16}, "*, mhc, H",
                                  ops::Layout::contiguous),
                       ops::input("mix", {DType::f32}, "*, mhc, 1",
                                  ops::Layout::contiguous),
                       ops::output("o", {DType::bf16}, "*, H",
                                   ops::Layout::contiguous, "the layer input")},
           .dim_rules = {{.dim = "mhc", .min = 1, .max = 16},
                         {.dim = "H", .min = 1}},
           .cli_shape = "*, mhc, H",
           .default_shape = {8192, 4, 7168},
           .reference =
               [](const ops::HostCall &c) {
                 return std::vector{
                     mhc_pre_apply_mix_ref(c.tensor("x"), c.tensor("mix"))};
               }},
          {[](const ops::Call &c) {
             return stream_spec(c, c.dim("mhc"), {"x", "o"});
           },
           mhc_pre_apply_mix_fwd_kernel,
           [](const ops::Call &c, const MhcStreamSpec &s,
              ops::KernelArgs &args) {
             const int64_t h = c.dim("H");
             args.tensor("x", token_rows(c.tensor("x"), 2, s.mhc, h));
             args.tensor("mix", token_rows(c.tensor("mix"), 2, s.mhc, 1));
             args.tensor("o", token_rows(c.tensor("o"), 1, 1, h));
           }});
  return op;
}
TILEJIT_REGISTER_OP(mhc_pre_apply_mix_fwd_op);

} // namespace tilejit::mhc
