// mhc_dsl.h - Pieces of the mHC kernels that more than one kernel runs, so
// that a fused kernel computes what the separate ones do, bit for bit:
// Sinkhorn's forward and the pre-apply's fma chain.
#pragma once

#include "tilejit/compiler/dsl.h"

#include <vector>

namespace tilejit::mhc {

/// Sinkhorn's forward (moe_engram_mhc.md §3.2) of the (B, n, n) fragment y:
/// a row softmax plus eps, a column step, then repeat - 1 (row, column)
/// steps. The steps are a loop, not unrolled: each holds 2 x n IEEE
/// divisions a thread, and unrolling all of them made ptxas the slowest
/// stage of the kernel's cold compile by far.
inline dsl::Value sinkhorn_forward(dsl::KernelBuilder &k, dsl::Value y,
                                   dsl::Value eps, int64_t repeat) {
  auto rows = [&](dsl::Value v) { return k.reduce_sum(v, 2) + eps; };
  auto cols = [&](dsl::Value v) { return k.reduce_sum(v, 1) + eps; };
  auto e = k.exp(y - k.reduce_max(y, 2));
  y = e / k.reduce_sum(e, 2) + eps;
  y = y / cols(y);
  return k.serial(k.index(1), k.index(repeat), {y},
                  [&](dsl::Value, std::vector<dsl::Value> carried) {
                    dsl::Value v = carried[0];
                    v = v / rows(v);
                    return std::vector<dsl::Value>{v / cols(v)};
                  })[0];
}

/// The pre-apply (§3.5) of token t's columns h0 .. h0 + chunk: o[t, 0, h]
/// = bf16(the fma chain over the streams from 0 of mix[t, m, 0] x[t, m,
/// h]), x bf16 (N, mhc, H), mix f32 (N, mhc, 1) read as scalars every
/// thread reads, o bf16 (N, 1, H).
inline void apply_mix_chunk(dsl::KernelBuilder &k, const dsl::Tensor &x,
                            const dsl::Tensor &mix, const dsl::Tensor &o,
                            dsl::Value t, dsl::Value h0, int64_t mhc,
                            int64_t chunk) {
  auto zero = k.index(0);
  dsl::Value acc = k.full({1, 1, chunk}, 0, DType::f32);
  for (int64_t m = 0; m < mhc; ++m) {
    auto stream =
        k.cast(k.load(x, {t, k.index(m), h0}, {1, 1, chunk}), DType::f32);
    acc = k.fma(k.load_scalar(mix, {t, k.index(m), zero}), stream, acc);
  }
  k.store(k.cast(acc, DType::bf16), o, {t, zero, h0});
}

} // namespace tilejit::mhc
