// mhc_pre_apply_mix.dsl.cpp - mhc_pre_apply_mix_fwd in the tile DSL: a
// block a token and a chunk of its columns; the layer input is the fma
// chain over the streams from 0 (mix[m] a scalar every thread reads),
// rounded once to bf16.
#include "mhc/mhc_dsl.h"
#include "mhc/mhc_stream.h"

#include "tilejit/compiler/dsl.h"

namespace tilejit::mhc {

Kernel mhc_pre_apply_mix_fwd_kernel(const MhcStreamSpec &s) {
  return apply_mix_kernel("mhc_pre_apply_mix_fwd", "x", "mix", "o", s.mhc,
                          s.chunk, s.threads, s.vector_bytes);
}

} // namespace tilejit::mhc

namespace tilejit::mhc {

Kernel mhc_pre_apply_mix_bwd_kernel(const MhcStreamSpec &s) {
  dsl::KernelBuilder k("mhc_pre_apply_mix_bwd", s.threads);
  k.programmatic_launch();
  const auto bf16 = DType::bf16, f32 = DType::f32;
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto o_grad = k.tensor("o_grad", bf16, 3, access);         // (N, 1, H)
  auto x = k.tensor("x", bf16, 3, access);                   // (N, mhc, H)
  auto mix = k.tensor("mix", f32, 3);                        // (N, mhc, 1)
  auto x_grad = k.tensor("x_grad", bf16, 3, access);         // (N, mhc, H)
  auto x_grad_out = k.tensor("x_grad_out", bf16, 3, access); // may be x_grad
  auto mix_grad = k.tensor("mix_grad", f32, 3);              // (N, mhc, 1)
  k.grid({k.blocks(o_grad, 0)});
  const int mhc = s.mhc;
  const int64_t chunk = s.chunk;
  auto t = k.block_id(0), zero = k.index(0);
  std::vector<dsl::Value> mix_m;
  for (int m = 0; m < mhc; ++m)
    mix_m.push_back(k.load_scalar(mix, {t, k.index(m), zero}));
  // Carried: per-thread partials of mix_grad[m].
  const std::vector<int64_t> box = {1, 1, chunk};
  std::vector<dsl::Value> init(mhc, k.full(box, 0, f32));
  auto chunks = (k.dim(x, 2) + k.index(chunk - 1)) / k.index(chunk);
  auto sums = k.serial(
      zero, chunks, init, [&](dsl::Value step, std::vector<dsl::Value> acc) {
        auto h0 = step * k.index(chunk);
        auto g = k.cast(k.load(o_grad, {t, zero, h0}, box), f32);
        for (int m = 0; m < mhc; ++m) {
          auto at = k.index(m);
          auto stream = k.cast(k.load(x, {t, at, h0}, box), f32);
          acc[m] = k.fma(g, stream, acc[m]);
          // Each element read, then written by the same thread: in place
          // when x_grad_out is x_grad.
          auto before = k.cast(k.load(x_grad, {t, at, h0}, box), f32);
          k.store(k.cast(k.fma(mix_m[m], g, before), bf16), x_grad_out,
                  {t, at, h0});
        }
        return acc;
      });
  for (int m = 0; m < mhc; ++m)
    k.store(k.reduce_sum(sums[m], 2), mix_grad, {t, k.index(m), zero});
  return k.build();
}

} // namespace tilejit::mhc
