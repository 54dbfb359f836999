// expand_to_mhc.dsl.cpp - expand_to_mhc_fwd and _bwd in the tile DSL: a
// block a token and a chunk of its columns; the forward stores the row
// once a stream, the backward adds the streams in f32 from 0 (stream 0
// first) and rounds once to bf16.
#include "mhc/mhc_stream.h"

#include "tilejit/compiler/dsl.h"

namespace tilejit::mhc {

Kernel expand_to_mhc_fwd_kernel(const MhcStreamSpec &s) {
  dsl::KernelBuilder k("expand_to_mhc_fwd", s.threads);
  k.programmatic_launch();
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto x = k.tensor("x", DType::bf16, 3, access); // (N, 1, H)
  auto o = k.tensor("o", DType::bf16, 3, access); // (N, mhc, H)
  k.grid({k.blocks(x, 0), k.blocks(x, 2, s.chunk)});
  auto t = k.block_id(0), h0 = k.block_id(1) * k.index(s.chunk);
  auto row = k.load(x, {t, k.index(0), h0}, {1, 1, s.chunk});
  for (int m = 0; m < s.mhc; ++m)
    k.store(row, o, {t, k.index(m), h0});
  return k.build();
}

Kernel expand_to_mhc_bwd_kernel(const MhcStreamSpec &s) {
  dsl::KernelBuilder k("expand_to_mhc_bwd", s.threads);
  k.programmatic_launch();
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto o_grad = k.tensor("o_grad", DType::bf16, 3, access); // (N, mhc, H)
  auto x_grad = k.tensor("x_grad", DType::bf16, 3, access); // (N, 1, H)
  k.grid({k.blocks(x_grad, 0), k.blocks(x_grad, 2, s.chunk)});
  auto t = k.block_id(0), h0 = k.block_id(1) * k.index(s.chunk);
  dsl::Value sum = k.full({1, 1, s.chunk}, 0, DType::f32);
  for (int m = 0; m < s.mhc; ++m)
    sum = sum + k.cast(k.load(o_grad, {t, k.index(m), h0}, {1, 1, s.chunk}),
                       DType::f32);
  k.store(k.cast(sum, DType::bf16), x_grad, {t, k.index(0), h0});
  return k.build();
}

} // namespace tilejit::mhc
