// mhc_pre_apply_mix.cpp - mhc_pre_apply_mix_fwd and _bwd declared
// (TileKernels 2.1's raw entry points, MEM §3.5, tk21 §6.1): the layer
// input (..., H) = bf16 of the fma chain over the streams of x (..., mhc,
// H) with mix (..., mhc, 1); the backward adds mix * o_grad into the bf16
// x_grad (in place when x_grad_out is x_grad) and sums mix_grad over H.
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
           .dim_rules = stream_rules(),
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

const ops::OpDef &mhc_pre_apply_mix_bwd_op() {
  using ops::Layout;
  static const ops::OpDef op = ops::make_op<MhcStreamSpec>(
      {.name = "mhc_pre_apply_mix_bwd",
       .summary = "mhc_pre_apply_mix's gradients: x_grad + mix * o_grad "
                  "(an f32 fma, bf16; in place when x_grad_out is x_grad), "
                  "mix_grad = sum over H of o_grad * x",
       .tensors =
           {ops::input("o_grad", {DType::bf16}, "*, H", Layout::contiguous),
            ops::input("x", {DType::bf16}, "*, mhc, H", Layout::contiguous),
            ops::input("mix", {DType::f32}, "*, mhc, 1", Layout::contiguous),
            ops::input("x_grad", {DType::bf16}, "*, mhc, H", Layout::contiguous,
                       "the gradient so far (the residual's)"),
            ops::output("x_grad_out", {DType::bf16}, "*, mhc, H",
                        Layout::contiguous,
                        "x_grad + mix * o_grad; may be x_grad"),
            ops::output("mix_grad", {DType::f32}, "*, mhc, 1",
                        Layout::contiguous)},
       .dim_rules = stream_rules(),
       .cli_shape = "*, mhc, H",
       .default_shape = {8192, 4, 7168},
       .reference =
           [](const ops::HostCall &c) {
             ref::HostTensor x_grad = c.tensor("x_grad").clone();
             MhcPreApplyMixGrads g = mhc_pre_apply_mix_bwd_ref(
                 c.tensor("o_grad"), c.tensor("x"), c.tensor("mix"), x_grad);
             return std::vector{x_grad, g.mix_grad};
           }},
      {[](const ops::Call &c) {
         MhcStreamSpec s = stream_spec(c, c.dim("mhc"),
                                       {"o_grad", "x", "x_grad", "x_grad_out"});
         // 512 columns a step: 4 a thread.
         s.chunk = std::min(s.chunk, 512);
         return s;
       },
       mhc_pre_apply_mix_bwd_kernel,
       [](const ops::Call &c, const MhcStreamSpec &s, ops::KernelArgs &args) {
         const int64_t h = c.dim("H");
         args.tensor("o_grad", token_rows(c.tensor("o_grad"), 1, 1, h));
         for (const char *name : {"x", "x_grad", "x_grad_out"})
           args.tensor(name, token_rows(c.tensor(name), 2, s.mhc, h));
         for (const char *name : {"mix", "mix_grad"})
           args.tensor(name, token_rows(c.tensor(name), 2, s.mhc, 1));
       }});
  return op;
}
TILEJIT_REGISTER_OP(mhc_pre_apply_mix_bwd_op);

} // namespace tilejit::mhc
