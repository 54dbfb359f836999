// mhc_post.cpp - mhc_post_fwd and mhc_post_bwd declared (TileKernels 2.1's
// raw entry points, MEM §3.6, tk21 §6.3): the new residual out[o] =
// bf16(post[o] * x + sum over i of comb[i, o] * residual[i]), an f32 fma
// chain from stream 0; and its gradients (4 streams).
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
           .dim_rules = stream_rules(),
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

const ops::OpDef &mhc_post_bwd_op() {
  using ops::Layout;
  auto like = [](const char *name, const char *shape, DType dtype,
                 const char *doc) {
    return ops::output(name, {dtype}, shape, Layout::contiguous, doc);
  };
  static const ops::OpDef op = ops::make_op<MhcStreamSpec>(
      {.name = "mhc_post_bwd",
       .summary = "mhc_post's gradients (4 streams): d_x and d_residual (f32 "
                  "fma chains, bf16), d_post and d_comb (sums over H)",
       .tensors = {ops::input("x", {DType::bf16}, "*, H", Layout::contiguous),
                   ops::input("residual", {DType::bf16}, "*, mhc, H",
                              Layout::contiguous),
                   ops::input("post_layer_mix", {DType::f32}, "*, mhc, 1",
                              Layout::contiguous),
                   ops::input("comb_res_mix", {DType::f32}, "*, mhc, mhc",
                              Layout::contiguous),
                   ops::input("d_o", {DType::bf16}, "*, mhc, H",
                              Layout::contiguous, "the output's gradient"),
                   like("d_x", "*, H", DType::bf16,
                        "sum over o of post[o] * d_o[o]"),
                   like("d_residual", "*, mhc, H", DType::bf16,
                        "[i] = sum over o of comb[i, o] * d_o[o]"),
                   like("d_post", "*, mhc, 1", DType::f32,
                        "[o] = sum over H of x * d_o[o]"),
                   like("d_comb", "*, mhc, mhc", DType::f32,
                        "[i, o] = sum over H of residual[i] * d_o[o]")},
       .dim_rules = {{.dim = "H", .min = 1}},
       .cli_shape = "*, mhc, H",
       .default_shape = {8192, 4, 7168},
       .check =
           [](const ops::Call &c) {
             if (c.dim("mhc") != 4)
               throw UserError(fmt::format(
                   "mhc_post_bwd: argument 'residual' has {} streams; "
                   "requires 4 (as TileKernels' kernel)",
                   c.dim("mhc")));
           },
       .reference =
           [](const ops::HostCall &c) {
             MhcPostGrads g = mhc_post_bwd_ref(
                 c.tensor("d_o"), c.tensor("x"), c.tensor("residual"),
                 c.tensor("post_layer_mix"), c.tensor("comb_res_mix"));
             return std::vector{g.x_grad, g.residual_grad,
                                g.post_layer_mix_grad, g.comb_res_mix_grad};
           }},
      {[](const ops::Call &c) {
         MhcStreamSpec s = stream_spec(
             c, c.dim("mhc"), {"x", "residual", "d_o", "d_x", "d_residual"});
         // 512 columns a step: 4 a thread, 20 partial sums of 4 each.
         s.chunk = std::min(s.chunk, 512);
         return s;
       },
       mhc_post_bwd_kernel,
       [](const ops::Call &c, const MhcStreamSpec &s, ops::KernelArgs &args) {
         const int64_t h = c.dim("H");
         for (const char *name : {"x", "d_x"})
           args.tensor(name, token_rows(c.tensor(name), 1, 1, h));
         for (const char *name : {"residual", "d_o", "d_residual"})
           args.tensor(name, token_rows(c.tensor(name), 2, s.mhc, h));
         for (const char *name : {"post_layer_mix", "d_post"})
           args.tensor(name, token_rows(c.tensor(name), 2, s.mhc, 1));
         for (const char *name : {"comb_res_mix", "d_comb"})
           args.tensor(name, token_rows(c.tensor(name), 2, s.mhc, s.mhc));
       }});
  return op;
}
TILEJIT_REGISTER_OP(mhc_post_bwd_op);

} // namespace tilejit::mhc
