// mhc_pre_norm_fn_partials.dsl.cpp - the split-K partials of mHC's norm in
// the tile DSL (moe_engram_mhc.md §3.3's fwd_mul with one split a block
// column): block (b, s) takes tokens n b .. n b + n - 1 (n = the spec's
// tokens) and split s's columns in chunks; each chunk of x (bf16, exact as
// tf32) and of fn (f32) goes to shared tiles and into k.gemm, mma.sync
// m16n8k8 on tf32 with fn rounded to the nearest tf32, ties away (as the
// original's 0x1000 added to its bits; mixes 24 .. 31 read as 0), with the
// squares in the same loop. With stages > 0 the chunks arrive by cp.async,
// stages - 1 ahead (k.pipelined), as the original's 2-stage pipeline.
#include "mhc/mhc_pre_norm_fn_partials.h"

#include "tilejit/compiler/dsl.h"

namespace tilejit::mhc {

Kernel mhc_pre_norm_fn_partials_kernel(const MhcNormFnSpec &s) {
  using dsl::Value;
  constexpr int64_t mixes = 32;
  const int64_t tokens = s.tokens, chunk = s.chunk, group = s.square_group;
  dsl::KernelBuilder k("mhc_pre_norm_fn_partials", 128);
  k.programmatic_launch();
  const auto f32 = DType::f32, bf16 = DType::bf16;
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto x = k.tensor("residual_rows", bf16, 2, access); // (T, Kd)
  auto fn = k.tensor("fn", f32, 2, access);            // (M3, Kd)
  auto mul = k.tensor("gemm_out_mul", f32, 3);         // (S, T, M3)
  auto sq = k.tensor("sqrsum_cols", f32, 3);           // (S, T, 1)
  k.grid({k.blocks(x, 0, tokens), k.blocks(mul, 0)});
  auto t0 = k.block_id(0) * k.index(tokens), split = k.block_id(1);
  auto zero = k.index(0);
  auto part = k.dim(x, 1) / k.dim(mul, 0);
  auto k0 = split * part;
  auto count = part / k.index(chunk);
  // The product, and the squares column by column or in groups of
  // `group` columns summed in registers each step (added up across the
  // row once, after the loop).
  auto init = std::vector<Value>{
      k.full({tokens, mixes}, 0, f32),
      group == 1 ? k.full({tokens, chunk}, 0, f32)
                 : k.full({tokens, chunk / group, 1}, 0, f32)};
  // One chunk, its tiles x (bf16) and fn (f32) in shared memory: x . fn^T
  // with fn rounded to tf32 (as the original's 0x1000 added to its bits)
  // from zero (no accumulator into the gemm), and x's squares.
  auto step = [&](Value sx, Value sfn, std::vector<Value> acc) {
    auto xt = k.cast(k.load(sx, {zero, zero}, {tokens, chunk}), f32);
    auto product = k.gemm(sx, sfn, init[0], dsl::Tf32::rounded);
    auto squares =
        group == 1 ? xt * xt
                   : k.reduce_sum(
                         k.reshape(xt * xt, {tokens, chunk / group, group}), 2);
    return std::vector<Value>{acc[0] + product, acc[1] + squares};
  };
  auto sx = k.alloc_shared(bf16, {tokens, chunk});
  auto sfn = k.alloc_shared(f32, {mixes, chunk});
  std::vector<Value> sums;
  if (s.stages == 0) {
    sums = k.serial(zero, count, init, [&](Value i, std::vector<Value> acc) {
      auto c0 = k0 + i * k.index(chunk);
      auto xt = k.load(x, {t0, c0}, {tokens, chunk});
      auto fnt = k.load(fn, {zero, c0}, {mixes, chunk});
      k.barrier(); // the last chunk's gemm has read the tiles
      k.store(xt, sx, {zero, zero});
      k.store(fnt, sfn, {zero, zero});
      k.barrier();
      return step(sx, sfn, acc);
    });
  } else {
    // The chunks copied (cp.async) stages - 1 ahead; fn's rows past M3
    // read as zeros.
    sums = k.pipelined(count, s.stages, init,
                       [&](Value i, std::vector<Value> acc) {
                         auto c0 = k0 + i * k.index(chunk);
                         k.copy(x, {t0, c0}, sx);
                         k.copy(fn, {zero, c0}, sfn);
                         return step(sx, sfn, acc);
                       });
  }
  // One element a thread (the partials' rows need not be aligned), in a
  // layout of its own so that the loop's fragments keep wide vectors.
  k.store(k.relayout(k.reshape(sums[0], {1, tokens, mixes}), 1), mul,
          {split, t0, zero});
  k.store(k.reshape(k.reduce_sum(sums[1], 1), {1, tokens, 1}), sq,
          {split, t0, zero});
  return k.build();
}

} // namespace tilejit::mhc
