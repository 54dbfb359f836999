// norm_forward.dsl.cpp - norm_forward in the tile DSL: a block a row. Pass
// 1 over the chunks: h = x (+ residual, rounded to x's dtype and written to
// residual_out), per-thread sums of h^2; one block sum S, rstd = rsqrt(S /
// H + eps). Pass 2 takes h again (held in registers for rows of up to 64
// elements a thread, else read again from x or residual_out: L1/L2), and
// writes out = (h * rstd) * (weight * out_scale) in x's dtype; or, for
// norm_forward_and_per_token_cast, that value quantized to e4m3 with a scale
// a 32 columns (per_token_cast's, §3.2) and, when asked, rounded to bf16.
#include "quant/norm_forward.h"
#include "quant/scale_dsl.h"

#include "tilejit/compiler/dsl.h"

#include <optional>

namespace tilejit::quant {

Kernel norm_forward_kernel(const NormForwardSpec &s) {
  using dsl::Value;
  dsl::KernelBuilder k(
      s.cast ? "norm_forward_and_per_token_cast" : "norm_forward", s.threads);
  k.programmatic_launch();
  const auto f32 = DType::f32;
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto x = k.tensor("x_rows", s.dtype, 2, access); // (N, H)
  auto out = k.tensor("out_rows", s.cast ? DType::e4m3 : s.dtype, 2, access);
  std::optional<dsl::Tensor> weight, residual, residual_out, rstd_out, out_sf,
      out_bf16;
  const bool packed = s.sf_layout == SfLayout::packed_ue8m0;
  if (s.cast) // packed: the bytes (N, words, 4) of the int32 words
    out_sf = k.tensor("out_sf", packed ? DType::u8 : f32, packed ? 3 : 2);
  if (s.out_bf16)
    out_bf16 = k.tensor("out_bf16_rows", DType::bf16, 2, access);
  // (rows, H / 128, 4): the bytes of the int32 (rows, H / 128).
  std::optional<dsl::Tensor> mega;
  std::optional<Value> block_m;
  if (s.mega) {
    mega = k.tensor("mega_moe_sf_bytes", DType::u8, 3);
    block_m = k.scalar("mega_moe_block_m", DType::i32);
  }
  if (s.weight)
    weight = k.tensor("weight_row", s.dtype, 2, access); // (1, H)
  if (s.residual) {
    residual = k.tensor("residual_rows", s.dtype, 2, access);
    residual_out = k.tensor("residual_out_rows", s.dtype, 2, access);
  }
  if (s.rstd)
    rstd_out = k.tensor("rstd_rows", f32, 2); // (N, 1)
  auto eps = k.scalar("eps", f32), out_scale = k.scalar("out_scale", f32);
  const int64_t chunk = s.chunk, chunks = (s.hidden + chunk - 1) / chunk;
  const std::vector<int64_t> box = {1, chunk};
  k.grid({k.blocks(x, 0)});
  auto r = k.block_id(0), zero = k.index(0);
  // h of the chunk at column c0, in x's dtype.
  auto h_at = [&](Value c0) {
    Value h = k.load(x, {r, c0}, box);
    if (residual) {
      h = k.cast(k.cast(h, f32) + k.cast(k.load(*residual, {r, c0}, box), f32),
                 s.dtype);
      k.store(h, *residual_out, {r, c0});
    }
    return h;
  };
  // The chunk's output y (f32, chunk c) quantized as per_token_cast(y in
  // x's dtype, e4m3, 32): groups' absmax, scales, e4m3 data. The packed
  // scales' bytes past the last group (of the last word) are written 0.
  auto quantize = [&](Value y, Value c) {
    auto c0 = c * k.index(chunk);
    if (out_bf16) // one rounding of the f32 value
      k.store(k.cast(y, DType::bf16), *out_bf16, {r, c0});
    if (s.dtype != f32)
      y = k.cast(k.cast(y, s.dtype), f32);
    const int64_t n = chunk / 32, scales = (s.hidden + 31) / 32;
    auto groups = k.reshape(y, {1, n, 32});
    auto sc = scales_of(k, k.reduce_absmax(groups, 2), kE4m3Limits, s.round_sf);
    k.store(k.cast(k.reshape(groups * sc.sf_inv, box), DType::e4m3), out,
            {r, c0});
    auto first = c * k.index(n);
    Value sf = sc.sf;
    if (packed) {
      auto group = k.iota({1, n, 1}, 1) + k.cast(first, DType::i32);
      sf = k.select(k.lt(group, k.constant(scales, DType::i32)),
                    k.cast(sc.biased, DType::u8),
                    k.full({1, n, 1}, 0, DType::u8));
    }
    store_scales(k, sf, *out_sf, r, first, 1, n, packed);
    if (mega) { // mega_moe_row, on i32 scalars
      auto i32 = [&](int64_t v) { return k.constant(v, DType::i32); };
      auto t = k.cast(r, DType::i32), bm = *block_m;
      auto i = t % bm;
      auto row = t / bm * ((bm + i32(127)) / i32(128) * i32(128)) +
                 i / i32(128) * i32(128) + i % i32(32) * i32(4) +
                 i % i32(128) / i32(32);
      k.store(k.reshape(sf, {1, n / 4, 4}), *mega,
              {row, first / k.index(4), k.index(0)});
    }
  };
  // A row of at most 64 elements a thread is held in registers: both
  // passes unrolled, pass 1's loads all in flight at once and pass 2
  // reusing its h (no second read). Longer rows loop over their chunks.
  const bool held = chunks * (chunk / s.threads) <= 64;
  std::vector<Value> hs; // pass 1's h a chunk, when held
  auto pass1 = [&](Value c, std::vector<Value> acc) {
    auto h = h_at(c * k.index(chunk));
    if (held)
      hs.push_back(h);
    auto hf = k.cast(h, f32);
    return std::vector<Value>{k.fma(hf, hf, acc[0])};
  };
  const std::vector<Value> none = {k.full(box, 0, f32)};
  auto sq = held ? k.unroll(0, chunks, none, pass1)
                 : k.serial(zero, k.index(chunks), none, pass1);
  auto hidden = k.constant(static_cast<double>(s.hidden), f32);
  auto rstd = k.rsqrt(k.reduce_sum(sq[0], 1) / hidden + eps); // (1, 1)
  if (rstd_out)
    k.store(rstd, *rstd_out, {r, zero});
  size_t used = 0; // unroll calls pass2 with c = 0, 1, ... in turn
  auto pass2 = [&](Value c, std::vector<Value>) {
    auto c0 = c * k.index(chunk);
    auto scale = weight
                     ? k.cast(k.load(*weight, {zero, c0}, box), f32) * out_scale
                     : out_scale;
    // h as pass 1 wrote it (the block sum's barrier orders it): right also
    // when residual_out is residual or x (in place).
    auto h = held           ? hs[used++]
             : residual_out ? k.load(*residual_out, {r, c0}, box)
                            : k.load(x, {r, c0}, box);
    auto y = (k.cast(h, f32) * rstd) * scale;
    if (s.cast)
      quantize(y, c);
    else
      k.store(k.cast(y, s.dtype), out, {r, c0});
    return std::vector<Value>{};
  };
  if (held)
    k.unroll(0, chunks, {}, pass2);
  else
    k.serial(zero, k.index(chunks), {}, pass2);
  return k.build();
}

} // namespace tilejit::quant
