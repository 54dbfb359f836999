// mhc_pre_split_mixes_bwd.cpp - mhc_pre_split_mixes_bwd declared
// (TileKernels 2.1's raw entry point, MEM §3.4): from the gradients of the
// pre mix, the post mix and the comb logits, the input mixes' gradient and
// the scale's (3,) and base's (mhc3,) gradients, written (not added to).
#include "mhc/mhc_mixes.h"
#include "mhc/mhc_stream.h"
#include "mhc/reference.h"

#include "op/op.h"

#include <bit>

namespace tilejit::mhc {

namespace {

void check(const ops::Call &c) {
  const int64_t mhc = c.dim("mhc");
  if (c.dim("M3") != mhc * (mhc + 2))
    throw UserError(fmt::format(
        "mhc_pre_split_mixes_bwd: argument 'input_mixes' has {} mixes a "
        "token; requires mhc * (mhc + 2) = {} (mhc = {}, the streams of "
        "'pre_grad')",
        c.dim("M3"), mhc * (mhc + 2), mhc));
}

MhcMixSpec spec(const ops::Call &c) {
  MhcMixSpec s;
  s.mhc = static_cast<int32_t>(c.dim("mhc"));
  // 1024 mixes a tile of 128 threads.
  s.block_t = static_cast<int32_t>(std::max<uint32_t>(
      1, 1024 / std::bit_ceil(static_cast<uint32_t>(s.mhc * (s.mhc + 2)))));
  return s;
}

void views(const ops::Call &c, const MhcMixSpec &s, ops::KernelArgs &args) {
  const int64_t mhc = s.mhc, mhc3 = mhc * (mhc + 2);
  const int64_t n = tokens_of(c.tensor("input_mixes"), 1);
  for (const char *name : {"pre_grad", "post_grad", "post_layer_mix"})
    args.tensor(name, token_matrix(c.tensor(name), n, mhc, mhc));
  args.tensor("comb_grad",
              token_matrix(c.tensor("comb_grad"), n, mhc * mhc, mhc * mhc));
  args.tensor("input_mixes",
              token_matrix(c.tensor("input_mixes"), n, mhc3, mhc3));
  args.tensor("input_mixes_grad",
              token_matrix(c.tensor("input_mixes_grad"), n, mhc3, mhc3));
  args.tensor("mhc_base_rows", token_matrix(c.tensor("mhc_base"), n, mhc3, 0));
  args.tensor("mhc_base_grad_row",
              token_matrix(c.tensor("mhc_base_grad"), 1, mhc3, mhc3));
  args.tensor("mhc_scale_grad_row",
              token_matrix(c.tensor("mhc_scale_grad"), 1, 3, 3));
}

ops::TensorShape scratch(const ops::Call &, const MhcMixSpec &s) {
  const int64_t w = std::bit_ceil(static_cast<uint32_t>(s.mhc * (s.mhc + 2)));
  return {DType::f32, {kSplitMixesPartials, 2 * w}, {}};
}

} // namespace

const ops::OpDef &mhc_pre_split_mixes_bwd_op() {
  using ops::Layout;
  auto f32 = [](const char *name, const char *shape, const char *doc = "") {
    return ops::input(name, {DType::f32}, shape, Layout::contiguous, doc);
  };
  static const ops::OpDef op = ops::make_op<MhcMixSpec>(
      {.name = "mhc_pre_split_mixes_bwd",
       .summary = "the split mixes' gradients: the input mixes', the "
                  "scale's and the base's (sums over the tokens)",
       .tensors = {f32("pre_grad", "*, mhc, 1", "the pre mix's gradient"),
                   f32("post_grad", "*, mhc, 1"),
                   f32("comb_grad", "*, mhc, mhc"), f32("input_mixes", "*, M3"),
                   f32("post_layer_mix", "*, mhc, 1", "the forward's"),
                   f32("mhc_scale", "3"), f32("mhc_base", "M3"),
                   ops::output("input_mixes_grad", {DType::f32}, "*, M3",
                               Layout::contiguous),
                   ops::output("mhc_scale_grad", {DType::f32}, "3",
                               Layout::contiguous, "written, not added to"),
                   ops::output("mhc_base_grad", {DType::f32}, "M3",
                               Layout::contiguous, "written, not added to")},
       .params = {ops::real("mhc_post_mult_value", 1.0,
                            "the forward's post scale")},
       .dim_rules = {{.dim = "mhc", .min = 1, .max = 16}},
       .cli_shape = "*, mhc",
       .default_shape = {2, 4096, 4},
       .check = check,
       .derived_dims =
           [](const ops::ShapeArgs &a) {
             const int64_t mhc = a.dim("mhc");
             return std::vector<std::pair<std::string, int64_t>>{
                 {"M3", mhc * (mhc + 2)}};
           },
       .reference =
           [](const ops::HostCall &c) {
             MhcSplitMixesGrads g = mhc_pre_split_mixes_bwd_ref(
                 c.tensor("pre_grad"), c.tensor("post_grad"),
                 c.tensor("comb_grad"), c.tensor("input_mixes"),
                 c.tensor("post_layer_mix"), c.tensor("mhc_scale"),
                 c.tensor("mhc_base"),
                 static_cast<int>(c.tensor("pre_grad").shape().end()[-2]),
                 static_cast<float>(c.real("mhc_post_mult_value")));
             return std::vector{g.input_mixes_grad, g.mhc_scale_grad,
                                g.mhc_base_grad};
           }},
      {spec,
       mhc_pre_split_mixes_bwd_kernel,
       views,
       {mhc_pre_split_mixes_bwd_sum_kernel},
       scratch});
  return op;
}
TILEJIT_REGISTER_OP(mhc_pre_split_mixes_bwd_op);

} // namespace tilejit::mhc
