// mhc_post.dsl.cpp - mhc_post_fwd in the tile DSL: a block a token and a
// chunk of its columns; each output stream o is post[o] * x, then the fma
// chain over the residual's streams i from 0 with comb[i, o] (the mixes
// are scalars every thread reads; post_stream, mhc_dsl.h), rounded once to
// bf16.
#include "mhc/mhc_dsl.h"
#include "mhc/mhc_stream.h"

#include "tilejit/compiler/dsl.h"

#include <vector>

namespace tilejit::mhc {

Kernel mhc_post_fwd_kernel(const MhcStreamSpec &s) {
  dsl::KernelBuilder k("mhc_post_fwd", s.threads);
  k.programmatic_launch();
  const auto bf16 = DType::bf16, f32 = DType::f32;
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto x = k.tensor("x", bf16, 3, access);               // (N, 1, H)
  auto residual = k.tensor("residual", bf16, 3, access); // (N, mhc, H)
  auto post = k.tensor("post_layer_mix", f32, 3);        // (N, mhc, 1)
  auto comb = k.tensor("comb_res_mix", f32, 3);          // (N, mhc, mhc)
  auto out = k.tensor("out", bf16, 3, access);           // (N, mhc, H)
  k.grid({k.blocks(out, 0), k.blocks(out, 2, s.chunk)});
  auto t = k.block_id(0), h0 = k.block_id(1) * k.index(s.chunk);
  auto zero = k.index(0);
  const std::vector<int64_t> box = {1, 1, s.chunk};
  auto y = k.cast(k.load(x, {t, zero, h0}, box), f32);
  std::vector<dsl::Value> res;
  for (int i = 0; i < s.mhc; ++i)
    res.push_back(k.cast(k.load(residual, {t, k.index(i), h0}, box), f32));
  for (int o = 0; o < s.mhc; ++o) {
    std::vector<dsl::Value> comb_o;
    for (int i = 0; i < s.mhc; ++i)
      comb_o.push_back(k.load_scalar(comb, {t, k.index(i), k.index(o)}));
    auto acc = post_stream(k, k.load_scalar(post, {t, k.index(o), zero}), y,
                           comb_o, res);
    k.store(k.cast(acc, bf16), out, {t, k.index(o), h0});
  }
  return k.build();
}

} // namespace tilejit::mhc

namespace tilejit::mhc {

Kernel mhc_post_bwd_kernel(const MhcStreamSpec &s) {
  dsl::KernelBuilder k("mhc_post_bwd", s.threads);
  k.programmatic_launch();
  const auto bf16 = DType::bf16, f32 = DType::f32;
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto x = k.tensor("x", bf16, 3, access);               // (N, 1, H)
  auto residual = k.tensor("residual", bf16, 3, access); // (N, mhc, H)
  auto post = k.tensor("post_layer_mix", f32, 3);        // (N, mhc, 1)
  auto comb = k.tensor("comb_res_mix", f32, 3);          // (N, mhc, mhc)
  auto d_o = k.tensor("d_o", bf16, 3, access);           // (N, mhc, H)
  auto d_x = k.tensor("d_x", bf16, 3, access);
  auto d_residual = k.tensor("d_residual", bf16, 3, access);
  auto d_post = k.tensor("d_post", f32, 3);
  auto d_comb = k.tensor("d_comb", f32, 3);
  k.grid({k.blocks(x, 0)});
  const int mhc = s.mhc;
  const int64_t chunk = s.chunk;
  auto t = k.block_id(0), zero = k.index(0);
  auto at = [&](int i) { return k.index(i); };
  std::vector<dsl::Value> post_o, comb_io;
  for (int o = 0; o < mhc; ++o)
    post_o.push_back(k.load_scalar(post, {t, at(o), zero}));
  for (int i = 0; i < mhc; ++i)
    for (int o = 0; o < mhc; ++o)
      comb_io.push_back(k.load_scalar(comb, {t, at(i), at(o)}));
  // Carried: per-thread partials of d_post[o] (mhc) and d_comb[i, o].
  const std::vector<int64_t> box = {1, 1, chunk};
  std::vector<dsl::Value> init(mhc + mhc * mhc, k.full(box, 0, f32));
  auto chunks = (k.dim(x, 2) + k.index(chunk - 1)) / k.index(chunk);
  auto sums = k.serial(
      zero, chunks, init, [&](dsl::Value step, std::vector<dsl::Value> acc) {
        auto h0 = step * k.index(chunk);
        auto y = k.cast(k.load(x, {t, zero, h0}, box), f32);
        std::vector<dsl::Value> g, res;
        for (int o = 0; o < mhc; ++o) {
          g.push_back(k.cast(k.load(d_o, {t, at(o), h0}, box), f32));
          res.push_back(k.cast(k.load(residual, {t, at(o), h0}, box), f32));
        }
        dsl::Value dx = k.full(box, 0, f32);
        for (int o = 0; o < mhc; ++o) {
          dx = k.fma(post_o[o], g[o], dx);
          acc[o] = k.fma(y, g[o], acc[o]);
        }
        k.store(k.cast(dx, bf16), d_x, {t, zero, h0});
        for (int i = 0; i < mhc; ++i) {
          dsl::Value dr = k.full(box, 0, f32);
          for (int o = 0; o < mhc; ++o) {
            dr = k.fma(comb_io[i * mhc + o], g[o], dr);
            acc[mhc + i * mhc + o] =
                k.fma(res[i], g[o], acc[mhc + i * mhc + o]);
          }
          k.store(k.cast(dr, bf16), d_residual, {t, at(i), h0});
        }
        return acc;
      });
  for (int o = 0; o < mhc; ++o)
    k.store(k.reduce_sum(sums[o], 2), d_post, {t, at(o), zero});
  for (int i = 0; i < mhc; ++i)
    for (int o = 0; o < mhc; ++o)
      k.store(k.reduce_sum(sums[mhc + i * mhc + o], 2), d_comb,
              {t, at(i), at(o)});
  return k.build();
}

} // namespace tilejit::mhc
