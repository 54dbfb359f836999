// mhc_post.dsl.cpp - mhc_post_fwd in the tile DSL: a block a token and a
// chunk of its columns; each output stream o is post[o] * x, then the fma
// chain over the residual's streams i from 0 with comb[i, o] (the mixes
// are scalars every thread reads), rounded once to bf16.
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
    auto acc = k.load_scalar(post, {t, k.index(o), zero}) * y;
    for (int i = 0; i < s.mhc; ++i)
      acc =
          k.fma(k.load_scalar(comb, {t, k.index(i), k.index(o)}), res[i], acc);
    k.store(k.cast(acc, bf16), out, {t, k.index(o), h0});
  }
  return k.build();
}

} // namespace tilejit::mhc
