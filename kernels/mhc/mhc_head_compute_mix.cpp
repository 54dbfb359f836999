// mhc_head_compute_mix.cpp - mhc_head_compute_mix_fwd declared
// (TileKernels 2.1's raw entry point, MEM §3.7): the head's mixes
// sigmoid(in * scale + base[j]) + mhc_pre_eps over (..., mhc).
#include "mhc/mhc_mixes.h"
#include "mhc/mhc_stream.h"
#include "mhc/reference.h"

#include "op/op.h"

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
  for (const char *name : {"input_mix", "output_mix"})
    aligned = aligned &&
              ops::rows_aligned(token_matrix(c.tensor(name), n, mhc, mhc), 16);
  s.vector_bytes = aligned ? 16 : 0;
  return s;
}

void views(const ops::Call &c, const MhcMixSpec &s, ops::KernelArgs &args) {
  const int64_t n = tokens_of(c.tensor("input_mix"), 1);
  args.tensor("input_mix",
              token_matrix(c.tensor("input_mix"), n, s.mhc, s.mhc));
  args.tensor("output_mix",
              token_matrix(c.tensor("output_mix"), n, s.mhc, s.mhc));
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

} // namespace tilejit::mhc
