// mhc_head_compute_mix.cpp - mhc_head_compute_mix_fwd and _bwd declared
// (TileKernels 2.1's raw entry points, MEM §3.7): the head's mixes
// sigmoid(in * scale + base[j]) + mhc_pre_eps over (..., mhc); the
// backward's input gradient and per-block partials of the scale's and
// base's (num_sms rows the caller adds up, as TileKernels').
#include "mhc/mhc_mixes.h"
#include "mhc/mhc_stream.h"
#include "mhc/reference.h"

#include "op/op.h"

#include <algorithm>
#include <bit>

namespace tilejit::mhc {

namespace {

MhcMixSpec spec(const ops::Call &c) {
  MhcMixSpec s;
  s.mhc = static_cast<int32_t>(c.dim("mhc"));
  // 1024 mixes a block of 128 threads.
  s.block_t =
      static_cast<int32_t>(1024 / std::bit_ceil(static_cast<uint32_t>(s.mhc)));
  const int64_t n = tokens_of(c.tensor("input_mix"), 1), mhc = s.mhc;
  bool aligned = mhc % 4 == 0;
  for (const char *name :
       {"input_mix", "output_mix", "output_mix_grad", "input_mix_grad"})
    if (c.op().tensor_index(name) >= 0)
      aligned = aligned && ops::rows_aligned(
                               token_matrix(c.tensor(name), n, mhc, mhc), 16);
  s.vector_bytes = aligned ? 16 : 0;
  return s;
}

void views(const ops::Call &c, const MhcMixSpec &s, ops::KernelArgs &args) {
  const int64_t n = tokens_of(c.tensor("input_mix"), 1);
  for (const char *name :
       {"input_mix", "output_mix", "output_mix_grad", "input_mix_grad"})
    if (c.op().tensor_index(name) >= 0)
      args.tensor(name, token_matrix(c.tensor(name), n, s.mhc, s.mhc));
  args.tensor("mhc_base_rows", token_matrix(c.tensor("mhc_base"), n, s.mhc, 0));
}

} // namespace

const ops::OpDef &mhc_head_compute_mix_fwd_op() {
  using ops::Layout;
  static const ops::OpDef op = ops::make_op<MhcMixSpec>(
      {.name = "mhc_head_compute_mix_fwd",
       .summary = "the head's mixes: sigmoid(input_mix * scale + base) + "
                  "mhc_pre_eps",
       .tensors =
           {ops::input("input_mix", {DType::f32}, "*, mhc", Layout::contiguous),
            ops::input("mhc_scale", {DType::f32}, "1", Layout::contiguous),
            ops::input("mhc_base", {DType::f32}, "mhc", Layout::contiguous),
            ops::output("output_mix", {DType::f32}, "*, mhc",
                        Layout::contiguous)},
       .params = {ops::real("mhc_pre_eps", 1e-6, "added to each mix")},
       .dim_rules = {{.dim = "mhc", .min = 1, .max = 64}},
       .cli_shape = "*, mhc",
       .default_shape = {2, 4096, 4},
       .reference =
           [](const ops::HostCall &c) {
             return std::vector{mhc_head_compute_mix_ref(
                 c.tensor("input_mix"), c.tensor("mhc_scale"),
                 c.tensor("mhc_base"),
                 static_cast<float>(c.real("mhc_pre_eps")))};
           }},
      {spec, mhc_head_compute_mix_fwd_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(mhc_head_compute_mix_fwd_op);

const ops::OpDef &mhc_head_compute_mix_bwd_op() {
  using ops::Layout;
  auto f32 = [](const char *name, const char *shape, const char *doc = "") {
    return ops::input(name, {DType::f32}, shape, Layout::contiguous, doc);
  };
  static const ops::OpDef op = ops::make_op<MhcMixSpec>(
      {.name = "mhc_head_compute_mix_bwd",
       .summary = "the head mixes' gradients: the input's, and num_sms "
                  "partial rows of the scale's and the base's (their sum is "
                  "the gradient)",
       .tensors = {f32("output_mix_grad", "*, mhc"), f32("input_mix", "*, mhc"),
                   f32("mhc_scale", "1"), f32("mhc_base", "mhc"),
                   ops::output("input_mix_grad", {DType::f32}, "*, mhc",
                               Layout::contiguous),
                   ops::output("mhc_scale_grad_partial", {DType::f32},
                               "num_sms, 1", Layout::contiguous,
                               "a block's partial sum a row"),
                   ops::output("mhc_base_grad_partial", {DType::f32},
                               "num_sms, mhc", Layout::contiguous,
                               "a block's partial sums a row")},
       .params = {ops::integer("num_sms", 132, 1, 4096,
                               "blocks (partial rows)")},
       .dim_rules = {{.dim = "mhc", .min = 1, .max = 64}},
       .cli_shape = "*, mhc",
       .default_shape = {2, 4096, 4},
       .reference =
           [](const ops::HostCall &c) {
             MhcHeadComputeMixGrads g = mhc_head_compute_mix_bwd_ref(
                 c.tensor("output_mix_grad"), c.tensor("input_mix"),
                 c.tensor("mhc_scale"), c.tensor("mhc_base"));
             // The totals as one row (compared with the partials' sum).
             const int64_t mhc = g.mhc_base_grad.numel();
             ref::HostTensor scale = ref::HostTensor::zeros(DType::f32, {1, 1});
             ref::HostTensor base =
                 ref::HostTensor::zeros(DType::f32, {1, mhc});
             scale.data<float>()[0] = g.mhc_scale_grad.data<float>()[0];
             std::copy_n(g.mhc_base_grad.data<float>(), mhc,
                         base.data<float>());
             return std::vector{g.input_mix_grad, scale, base};
           }},
      {[](const ops::Call &c) {
         MhcMixSpec s = spec(c);
         // 32 tokens a tile (TileKernels' token_block_size on CUDA) at 4
         // streams: each block loops over several.
         s.block_t =
             std::max<int32_t>(1, 128 / static_cast<int32_t>(std::bit_ceil(
                                            static_cast<uint32_t>(s.mhc))));
         return s;
       },
       mhc_head_compute_mix_bwd_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(mhc_head_compute_mix_bwd_op);

} // namespace tilejit::mhc
