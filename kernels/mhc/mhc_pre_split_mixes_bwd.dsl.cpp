// mhc_pre_split_mixes_bwd.dsl.cpp - mhc_pre_split_mixes_bwd in the tile
// DSL. Kernel 1: kSplitMixesPartials blocks, each over the token tiles b,
// b + blocks, ...; a tile is (block_t tokens, W = mhc3 rounded up to a
// power of two) with column j of part c(j) = min(2, j / mhc): gz = the pre
// gradient times s (1 - s) (s = sigmoid(fma(in, scale[0], base)),
// recomputed), the post gradient times post (1 - post / post_mult), or the
// comb gradient, each loaded at its part's column offset (the columns
// before it are outside its tensor: zeros); in_grad = gz scale[c(j)]; the
// block's column sums of gz and gz in go to its scratch row. Kernel 2: one
// block adds the rows: the base's gradient, and the scale's three sums of
// the terms over each part's columns.
#include "mhc/mhc_mixes.h"

#include "tilejit/compiler/dsl.h"

#include <algorithm>
#include <bit>

namespace tilejit::mhc {

namespace {

int64_t width_of(const MhcMixSpec &s) {
  return std::bit_ceil(static_cast<uint32_t>(s.mhc * (s.mhc + 2)));
}

} // namespace

Kernel mhc_pre_split_mixes_bwd_kernel(const MhcMixSpec &s) {
  using dsl::Value;
  dsl::KernelBuilder k("mhc_pre_split_mixes_bwd", s.threads);
  k.programmatic_launch();
  const auto f32 = DType::f32, i32 = DType::i32;
  auto pre_grad = k.tensor("pre_grad", f32, 2);   // (N, mhc)
  auto post_grad = k.tensor("post_grad", f32, 2); // (N, mhc)
  auto comb_grad = k.tensor("comb_grad", f32, 2); // (N, mhc^2)
  auto in = k.tensor("input_mixes", f32, 2);      // (N, mhc3)
  auto post = k.tensor("post_layer_mix", f32, 2); // (N, mhc)
  auto scale = k.tensor("mhc_scale", f32, 1);     // (3,)
  auto base = k.tensor("mhc_base_rows", f32, 2);  // (N, mhc3), stride 0
  auto in_grad = k.tensor("input_mixes_grad", f32, 2);
  auto partials = k.tensor("scratch", f32, 2); // (P, 2 W)
  auto post_mult = k.scalar("mhc_post_mult_value", f32);
  const int64_t bt = s.block_t, mhc = s.mhc, w = width_of(s);
  const std::vector<int64_t> box = {bt, w};
  k.grid({dsl::Extent(kSplitMixesPartials)});
  auto block = k.block_id(0), zero = k.index(0);
  auto blocks = k.index(kSplitMixesPartials);
  auto tiles = (k.dim(in, 0) + k.index(bt - 1)) / k.index(bt);
  auto steps = (tiles + blocks - k.index(1)) / blocks;
  auto col = k.iota(box, 1, i32);
  auto in_part = [&](int64_t part) {
    return k.lt(col, k.constant(static_cast<double>(part * mhc), i32));
  };
  // scale[c(j)] a column.
  auto sc0 = k.load_scalar(scale, {zero});
  auto sc1 = k.load_scalar(scale, {k.index(1)});
  auto sc2 = k.load_scalar(scale, {k.index(2)});
  auto sc = k.select(in_part(1), k.full(box, 0, f32) + sc0,
                     k.select(in_part(2), k.full(box, 0, f32) + sc1,
                              k.full(box, 0, f32) + sc2));
  auto one = k.constant(1, f32);
  // post_mult = 0 makes the post mix 0 and its gradient 0 (not 0 / 0).
  auto post_live = k.ne(post_mult, k.constant(0, f32));
  auto divisor = k.select(post_live, post_mult, one);
  auto sums = k.serial(
      zero, steps, {k.full(box, 0, f32), k.full(box, 0, f32)},
      [&](Value step, std::vector<Value> acc) {
        auto t0 = (step * blocks + block) * k.index(bt);
        // A part's tensor at its columns: origin -offset, the columns
        // before outside it.
        auto at = [&](const dsl::Tensor &t, int64_t offset) {
          return k.load(t, {t0, k.index(0) - k.index(offset)}, box);
        };
        auto x = k.load(in, {t0, zero}, box);
        auto sg = k.sigmoid(k.fma(x, sc0, k.load(base, {t0, zero}, box)));
        auto p = at(post, mhc);
        auto gz_post =
            k.select(post_live, at(post_grad, mhc) * p * (one - p / divisor),
                     k.full(box, 0, f32));
        auto gz =
            k.select(in_part(1), at(pre_grad, 0) * sg * (one - sg),
                     k.select(in_part(2), gz_post, at(comb_grad, 2 * mhc)));
        k.store(gz * sc, in_grad, {t0, zero});
        return std::vector{acc[0] + gz, k.fma(gz, x, acc[1])};
      });
  k.store(k.reduce_sum(sums[0], 0), partials, {block, zero});
  k.store(k.reduce_sum(sums[1], 0), partials, {block, k.index(w)});
  return k.build();
}

Kernel mhc_pre_split_mixes_bwd_sum_kernel(const MhcMixSpec &s) {
  using dsl::Value;
  // Rows of partials a step: at most 8 floats a thread (mhc 16: one row
  // of 1024).
  const int64_t w = width_of(s), mhc = s.mhc;
  const int64_t rows = std::clamp<int64_t>(1024 / (2 * w), 1, 8);
  dsl::KernelBuilder k(
      "mhc_pre_split_mixes_bwd_sum",
      static_cast<int>(std::clamp<int64_t>(rows * 2 * w, 32, 128)));
  k.programmatic_launch();
  const auto f32 = DType::f32, i32 = DType::i32;
  auto partials = k.tensor("scratch", f32, 2);              // (P, 2 W)
  auto base_grad = k.tensor("mhc_base_grad_row", f32, 2);   // (1, mhc3)
  auto scale_grad = k.tensor("mhc_scale_grad_row", f32, 2); // (1, 3)
  k.grid({dsl::Extent(1)});
  auto zero = k.index(0);
  const std::vector<int64_t> box = {rows, 2 * w};
  auto acc =
      k.serial(zero, k.index(kSplitMixesPartials / rows), {k.full(box, 0, f32)},
               [&](Value i, std::vector<Value> a) {
                 return std::vector{
                     a[0] + k.load(partials, {i * k.index(rows), zero}, box)};
               });
  auto sum = k.reduce_sum(acc[0], 0);    // (1, 2 W)
  k.store(sum, base_grad, {zero, zero}); // columns past mhc3 dropped
  // The scale's: the terms (columns W + j) summed over each part's j.
  const std::vector<int64_t> row = {1, 2 * w};
  auto col = k.iota(row, 1, i32);
  auto zeros = k.full(row, 0, f32);
  auto part_sum = [&](int64_t c) {
    auto lo = k.constant(static_cast<double>(w + c * mhc), i32);
    auto hi = k.constant(
        static_cast<double>(c == 2 ? 2 * w : w + (c + 1) * mhc), i32);
    return k.reduce_sum(
        k.select(k.ge(col, lo), k.select(k.lt(col, hi), sum, zeros), zeros), 1);
  };
  auto p0 = part_sum(0), p1 = part_sum(1), p2 = part_sum(2);
  auto is = [&](int c) { return k.eq(col, k.constant(c, i32)); };
  k.store(k.select(is(0), zeros + p0, k.select(is(1), zeros + p1, zeros + p2)),
          scale_grad, {zero, zero}); // columns past 3 dropped
  return k.build();
}

} // namespace tilejit::mhc
