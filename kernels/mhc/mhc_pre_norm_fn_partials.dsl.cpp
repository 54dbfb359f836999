// mhc_pre_norm_fn_partials.dsl.cpp - the split-K partials of mHC's norm in
// the tile DSL (moe_engram_mhc.md §3.3's fwd_mul with one split a block
// column): block (b, s) takes tokens 32 b .. 32 b + 31 and split s's
// columns in chunks; each chunk of x (bf16, exact as f32 and as tf32) and of
// fn rounded to tf32 as the original rounds it (0x1000 added to its bits;
// the tensor core drops the low 13) goes to shared tiles and into k.gemm,
// mma.sync m16n8k8 on tf32 (mixes 24 .. 31 read as 0), with the sum of
// squares in the same loop. With stages > 0 the chunks arrive by cp.async,
// stages - 1 ahead (k.pipelined), as the original's 2-stage pipeline.
#include "mhc/mhc_pre_norm_fn_partials.h"

#include "tilejit/compiler/dsl.h"

namespace tilejit::mhc {

Kernel mhc_pre_norm_fn_partials_kernel(const MhcNormFnSpec &s) {
  using dsl::Value;
  constexpr int64_t tokens = 32, mixes = 32;
  const int64_t chunk = s.chunk;
  dsl::KernelBuilder k("mhc_pre_norm_fn_partials", 128);
  k.programmatic_launch();
  const auto f32 = DType::f32;
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto x = k.tensor("residual_rows", DType::bf16, 2, access); // (T, Kd)
  auto fn = k.tensor("fn", f32, 2, access);                   // (M3, Kd)
  auto mul = k.tensor("gemm_out_mul", f32, 3);                // (S, T, M3)
  auto sq = k.tensor("sqrsum_cols", f32, 3);                  // (S, T, 1)
  k.grid({k.blocks(x, 0, tokens), k.blocks(mul, 0)});
  auto t0 = k.block_id(0) * k.index(tokens), split = k.block_id(1);
  auto zero = k.index(0);
  auto part = k.dim(x, 1) / k.dim(mul, 0);
  auto k0 = split * part;
  auto sx = k.alloc_shared(f32, {tokens, chunk});
  auto sfn = k.alloc_shared(f32, {mixes, chunk});
  auto init = std::vector<Value>{k.full({tokens, mixes}, 0, f32),
                                 k.full({tokens, 1}, 0, f32)};
  // One chunk: x as f32 and fn rounded as tf32 into the operand tiles
  // (after the barrier that the last chunk's gemm has read them), then the
  // product and the squares.
  auto step = [&](Value xt, Value fnt, std::vector<Value> acc) {
    auto bits = k.bitcast(fnt, DType::u32) + k.constant(0x1000, DType::u32);
    k.store(xt, sx, {zero, zero});
    k.store(k.bitcast(bits, f32), sfn, {zero, zero});
    k.barrier();
    return std::vector<Value>{k.gemm(sx, sfn, acc[0]),
                              acc[1] + k.reduce_sum(xt * xt, 1)};
  };
  auto count = part / k.index(chunk);
  std::vector<Value> sums;
  if (s.stages == 0) {
    sums = k.serial(zero, count, init, [&](Value i, std::vector<Value> acc) {
      auto c0 = k0 + i * k.index(chunk);
      auto xt = k.cast(k.load(x, {t0, c0}, {tokens, chunk}), f32);
      auto fnt = k.load(fn, {zero, c0}, {mixes, chunk});
      k.barrier(); // the last chunk's gemm has read the tiles
      return step(xt, fnt, acc);
    });
  } else {
    // The chunks copied (cp.async) stages - 1 ahead; fn's rows past M3
    // read as zeros. The loop's barrier each step orders the operand
    // tiles' writes after the last gemm.
    auto rx = k.alloc_shared(DType::bf16, {tokens, chunk});
    auto rfn = k.alloc_shared(f32, {mixes, chunk});
    sums = k.pipelined(
        count, s.stages, init, [&](Value i, std::vector<Value> acc) {
          auto c0 = k0 + i * k.index(chunk);
          k.copy(x, {t0, c0}, rx);
          k.copy(fn, {zero, c0}, rfn);
          auto xt = k.cast(k.load(rx, {zero, zero}, {tokens, chunk}), f32);
          return step(xt, k.load(rfn, {zero, zero}, {mixes, chunk}), acc);
        });
  }
  k.store(k.reshape(sums[0], {1, tokens, mixes}), mul, {split, t0, zero});
  k.store(k.reshape(sums[1], {1, tokens, 1}), sq, {split, t0, zero});
  return k.build();
}

} // namespace tilejit::mhc
