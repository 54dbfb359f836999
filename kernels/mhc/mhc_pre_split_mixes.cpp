// mhc_pre_split_mixes.cpp - mhc_pre_split_mixes_fwd declared (TileKernels
// 2.1's raw entry point, MEM §3.4): each token's mhc * (mhc + 2) mixes
// split into the pre mix (sigmoid + eps), the post mix (sigmoid times
// post_mult) and the comb logits, each z = fma(in, scale[part], base[j]).
#include "mhc/mhc_mixes.h"
#include "mhc/mhc_stream.h"
#include "mhc/reference.h"

#include "op/op.h"

#include <bit>

namespace tilejit::mhc {

namespace {

void check(const ops::Call &c) {
  const int64_t mhc = c.integer("mhc_mult");
  if (c.dim("M3") != mhc * (mhc + 2))
    throw UserError(fmt::format(
        "mhc_pre_split_mixes_fwd: argument 'input_mixes' has {} mixes a "
        "token; requires mhc_mult * (mhc_mult + 2) = {}",
        c.dim("M3"), mhc * (mhc + 2)));
}

MhcMixSpec spec(const ops::Call &c) {
  MhcMixSpec s;
  s.mhc = static_cast<int32_t>(c.integer("mhc_mult"));
  // 1024 comb logits a block of 128 threads, at least 4 pre mixes a thread.
  const auto streams = std::bit_ceil(static_cast<uint32_t>(s.mhc));
  const auto pairs = std::bit_ceil(static_cast<uint32_t>(s.mhc * s.mhc));
  s.block_t = static_cast<int32_t>(std::max(1024 / pairs, 512 / streams));
  // Vectors where the parts start on 16 bytes and the (N, part) views of
  // every tensor have rows aligned to 16 bytes.
  const int64_t n = tokens_of(c.tensor("input_mixes"), 1), mhc = s.mhc;
  bool aligned = mhc % 4 == 0;
  for (auto [name, cols] : {std::pair{"input_mixes", mhc * (mhc + 2)},
                            {"pre_layer_mix", mhc},
                            {"post_layer_mix", mhc},
                            {"comb_res_mix", mhc * mhc}})
    aligned = aligned && ops::rows_aligned(
                             token_matrix(c.tensor(name), n, cols, cols), 16);
  s.vector_bytes = aligned ? 16 : 0;
  return s;
}

void views(const ops::Call &c, const MhcMixSpec &s, ops::KernelArgs &args) {
  const int64_t n = tokens_of(c.tensor("input_mixes"), 1), mhc = s.mhc,
                mhc3 = mhc * (mhc + 2);
  args.tensor("input_mixes",
              token_matrix(c.tensor("input_mixes"), n, mhc3, mhc3));
  args.tensor("mhc_base_rows", token_matrix(c.tensor("mhc_base"), n, mhc3, 0));
  for (const char *name : {"pre_layer_mix", "post_layer_mix"})
    args.tensor(name, token_matrix(c.tensor(name), n, mhc, mhc));
  args.tensor("comb_res_mix",
              token_matrix(c.tensor("comb_res_mix"), n, mhc * mhc, mhc * mhc));
}

} // namespace

const ops::OpDef &mhc_pre_split_mixes_fwd_op() {
  using ops::Layout;
  auto mix = [](const char *name, const char *shape, const char *doc) {
    return ops::output(name, {DType::f32}, shape, Layout::contiguous, doc);
  };
  static const ops::OpDef op = ops::make_op<MhcMixSpec>(
      {.name = "mhc_pre_split_mixes_fwd",
       .summary = "each token's mhc * (mhc + 2) mixes split into the pre "
                  "mix, the post mix and the comb logits",
       .tensors = {ops::input("input_mixes", {DType::f32}, "*, M3",
                              Layout::contiguous),
                   ops::input("mhc_scale", {DType::f32}, "3",
                              Layout::contiguous, "a scale per part"),
                   ops::input("mhc_base", {DType::f32}, "M3",
                              Layout::contiguous),
                   mix("pre_layer_mix", "*, mhc_mult, 1",
                       "sigmoid(z) + mhc_pre_eps"),
                   mix("post_layer_mix", "*, mhc_mult, 1",
                       "sigmoid(z) * mhc_post_mult_value"),
                   mix("comb_res_mix", "*, mhc_mult, mhc_mult",
                       "z, before the Sinkhorn normalisation")},
       .params = {ops::integer("mhc_mult", 4, 1, 16, "streams"),
                  ops::real("mhc_post_mult_value", 1.0, "scales the post mix"),
                  ops::real("mhc_pre_eps", 1e-6, "added to the pre mix")},
       .cli_shape = "*, M3",
       .default_shape = {2, 4096, 24},
       .check = check,
       .reference =
           [](const ops::HostCall &c) {
             MhcSplitMixes r = mhc_pre_split_mixes_ref(
                 c.tensor("input_mixes"), c.tensor("mhc_scale"),
                 c.tensor("mhc_base"), static_cast<int>(c.integer("mhc_mult")),
                 static_cast<float>(c.real("mhc_post_mult_value")),
                 static_cast<float>(c.real("mhc_pre_eps")));
             return std::vector{r.pre_mix, r.post_mix, r.comb_mix};
           }},
      {spec, mhc_pre_split_mixes_fwd_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(mhc_pre_split_mixes_fwd_op);

} // namespace tilejit::mhc
