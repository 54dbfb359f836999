// mhc_dsl.h - Pieces of the mHC kernels that more than one kernel runs, so
// that a fused kernel computes what the separate ones do, bit for bit:
// Sinkhorn's forward, the pre-apply's and the post's fma chains.
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

/// The pre-apply's fma chain (§3.5): from 0, acc = fma(mix[m], x[m], acc)
/// over the streams m in order (mix scalars, x f32 fragments).
inline dsl::Value mix_streams(dsl::KernelBuilder &k,
                              const std::vector<dsl::Value> &mix,
                              const std::vector<dsl::Value> &x) {
  dsl::Value acc = k.full(x.at(0).shape(), 0, DType::f32);
  for (size_t m = 0; m < x.size(); ++m)
    acc = k.fma(mix[m], x[m], acc);
  return acc;
}

/// mhc_post's stream o (§3.6): post * y, then acc = fma(comb[i], res[i],
/// acc) over the residual's streams i in order (post and comb[i] = comb[i,
/// o] scalars; y and res f32 fragments).
inline dsl::Value post_stream(dsl::KernelBuilder &k, dsl::Value post,
                              dsl::Value y, const std::vector<dsl::Value> &comb,
                              const std::vector<dsl::Value> &res) {
  dsl::Value acc = post * y;
  for (size_t i = 0; i < res.size(); ++i)
    acc = k.fma(comb[i], res[i], acc);
  return acc;
}

/// The pre-apply (§3.5) of token t's columns h0 .. h0 + chunk: o[t, 0, h]
/// = bf16(mix_streams of mix[t, m, 0] and x[t, m, h]), x bf16 (N, mhc, H),
/// mix f32 (N, mhc, 1) read as scalars every thread reads, o bf16 (N, 1,
/// H).
inline void apply_mix_chunk(dsl::KernelBuilder &k, const dsl::Tensor &x,
                            const dsl::Tensor &mix, const dsl::Tensor &o,
                            dsl::Value t, dsl::Value h0, int64_t mhc,
                            int64_t chunk) {
  auto zero = k.index(0);
  std::vector<dsl::Value> mixes, streams;
  for (int64_t m = 0; m < mhc; ++m) {
    streams.push_back(
        k.cast(k.load(x, {t, k.index(m), h0}, {1, 1, chunk}), DType::f32));
    mixes.push_back(k.load_scalar(mix, {t, k.index(m), zero}));
  }
  k.store(k.cast(mix_streams(k, mixes, streams), DType::bf16), o,
          {t, zero, h0});
}

/// mhc_pre_apply_mix_fwd's kernel on tensors of the given names: x bf16
/// (N, mhc, H), mix f32 (N, mhc, 1), o bf16 (N, 1, H); a block a token and
/// `chunk` of its columns (apply_mix_chunk).
inline Kernel apply_mix_kernel(const char *kernel, const char *x_name,
                               const char *mix_name, const char *o_name,
                               int64_t mhc, int64_t chunk, int threads,
                               int vector_bytes) {
  dsl::KernelBuilder k(kernel, threads);
  k.programmatic_launch();
  const dsl::Access access = dsl::vectors_of(vector_bytes);
  auto x = k.tensor(x_name, DType::bf16, 3, access);
  auto mix = k.tensor(mix_name, DType::f32, 3);
  auto o = k.tensor(o_name, DType::bf16, 3, access);
  k.grid({k.blocks(o, 0), k.blocks(o, 2, chunk)});
  apply_mix_chunk(k, x, mix, o, k.block_id(0), k.block_id(1) * k.index(chunk),
                  mhc, chunk);
  return k.build();
}

} // namespace tilejit::mhc
