// mhc_post.cpp - mhc_post_fwd declared (TileKernels 2.1's raw entry point,
// MEM §3.6): the new residual out[o] = bf16(post[o] * x + sum over i of
// comb[i, o] * residual[i]), an f32 fma chain from stream 0.
#include "mhc/mhc_stream.h"
#include "mhc/reference.h"

#include "op/op.h"

namespace tilejit::mhc {

const ops::OpDef &mhc_post_fwd_op() {
  using ops::Layout;
  static const ops::OpDef op =
      ops::make_op<MhcStreamSpec>(
          {.name = "mhc_post_fwd",
           .summary = "the next residual: post[o] * x + the residual's streams "
                      "mixed by comb[:, o] (an f32 fma chain), bf16",
           .tensors = {ops::input("x", {DType::bf16}, "*, H",
                                  Layout::contiguous, "the sublayer's output"),
                       ops::input("residual", {DType::bf16}, "*, mhc, H",
                                  Layout::contiguous),
                       ops::input("post_layer_mix", {DType::f32}, "*, mhc, 1",
                                  Layout::contiguous),
                       ops::input("comb_res_mix", {DType::f32}, "*, mhc, mhc",
                                  Layout::contiguous, "[i, o]: from i to o"),
                       ops::output("out", {DType::bf16}, "*, mhc, H",
                                   Layout::contiguous, "the next residual")},
           .dim_rules = {{.dim = "mhc", .min = 1, .max = 16},
                         {.dim = "H", .min = 1}},
           .cli_shape = "*, mhc, H",
           .default_shape = {8192, 4, 7168},
           .reference =
               [](const ops::HostCall &c) {
                 return std::vector{mhc_post_ref(
                     c.tensor("x"), c.tensor("residual"),
                     c.tensor("post_layer_mix"), c.tensor("comb_res_mix"))};
               }},
          {[](const ops::Call &c) {
             return stream_spec(c, c.dim("mhc"), {"x", "residual", "out"});
           },
           mhc_post_fwd_kernel,
           [](const ops::Call &c, const MhcStreamSpec &s,
              ops::KernelArgs &args) {
             const int64_t h = c.dim("H");
             args.tensor("x", token_rows(c.tensor("x"), 1, 1, h));
             args.tensor("residual",
                         token_rows(c.tensor("residual"), 2, s.mhc, h));
             args.tensor("post_layer_mix",
                         token_rows(c.tensor("post_layer_mix"), 2, s.mhc, 1));
             args.tensor("comb_res_mix",
                         token_rows(c.tensor("comb_res_mix"), 2, s.mhc, s.mhc));
             args.tensor("out", token_rows(c.tensor("out"), 2, s.mhc, h));
           }});
  return op;
}
TILEJIT_REGISTER_OP(mhc_post_fwd_op);

} // namespace tilejit::mhc
