// mhc_reduce_partials.dsl.cpp - mhc_reduce_partials_and_rmsnorm in the tile
// DSL: a block block_t tokens, a (block_t, N3) tile a group, the per-token
// sums of squares read as rows of stride 0 along the mixes (every mix's
// thread reads its token's). Forward: the splits added in order (a loop),
// r = rsqrt(sq / group_size + eps), out = the fma chain of out_mul * r over
// the groups. Backward: out_mul_grad = out_grad * r and sqrsum_grad =
// (sum_j out_grad out_mul) r / (sq + C) / -2.
#include "mhc/mhc_reduce_partials.h"

#include "tilejit/compiler/dsl.h"

#include <bit>

namespace tilejit::mhc {

using dsl::Value;

namespace {

int64_t padded(int32_t mixes) {
  return std::bit_ceil(static_cast<uint32_t>(mixes));
}

} // namespace

Kernel mhc_reduce_partials_fwd_kernel(const MhcReducePartialsSpec &s) {
  dsl::KernelBuilder k("mhc_reduce_partials_and_rmsnorm_fwd", s.threads);
  k.programmatic_launch();
  const auto f32 = DType::f32;
  auto split_mul = k.tensor("out_mul_splitted", f32, 4);    // (S, T, G, N3)
  auto split_sq = k.tensor("sqrsum_splitted_rows", f32, 4); // N3 stride 0
  auto out_mul = k.tensor("out_mul", f32, 3);               // (T, G, N3)
  auto sqrsum = k.tensor("sqrsum_rows", f32, 3);            // N3 stride 0
  auto out = k.tensor("out", f32, 2);                       // (T, N3)
  auto group_size = k.scalar("rms_group_size", f32);
  auto eps = k.scalar("rms_eps", f32);
  const int64_t bt = s.block_t, n3 = padded(s.mixes);
  k.grid({k.blocks(out, 0, bt)});
  auto t0 = k.block_id(0) * k.index(bt), zero = k.index(0);
  auto tile = [&](const dsl::Tensor &t, Value split, Value group) {
    return k.reshape(k.load(t, {split, t0, group, zero}, {1, bt, 1, n3}),
                     {bt, n3});
  };
  auto splits = k.dim(split_mul, 0);
  Value acc = k.full({bt, n3}, 0, f32);
  for (int32_t g = 0; g < s.groups; ++g) {
    auto group = k.index(g);
    // (0 + split 0) + split 1 + ..., in split order.
    auto sums = k.serial(
        zero, splits, {k.full({bt, n3}, 0, f32), k.full({bt, n3}, 0, f32)},
        [&](Value i, std::vector<Value> a) {
          return std::vector<Value>{a[0] + tile(split_mul, i, group),
                                    a[1] + tile(split_sq, i, group)};
        });
    auto r = k.rsqrt(sums[1] / group_size + eps);
    k.store(k.reshape(sums[0], {bt, 1, n3}), out_mul, {t0, group, zero});
    k.store(k.reshape(sums[1], {bt, 1, n3}), sqrsum, {t0, group, zero});
    acc = k.fma(sums[0], r, acc);
  }
  k.store(acc, out, {t0, zero});
  return k.build();
}

Kernel mhc_reduce_partials_bwd_kernel(const MhcReducePartialsSpec &s) {
  dsl::KernelBuilder k("mhc_reduce_partials_and_rmsnorm_bwd", s.threads);
  k.programmatic_launch();
  const auto f32 = DType::f32;
  auto out_grad = k.tensor("out_grad_rows", f32, 3);   // (T, G, N3), G stride 0
  auto out_mul = k.tensor("out_mul", f32, 3);          // (T, G, N3)
  auto sqrsum = k.tensor("sqrsum_rows", f32, 3);       // N3 stride 0
  auto mul_grad = k.tensor("out_mul_grad", f32, 3);    // (T, G, N3)
  auto sq_grad = k.tensor("sqrsum_grad_rows", f32, 3); // (T, G, 1)
  auto group_size = k.scalar("rms_group_size", f32);
  auto eps = k.scalar("rms_eps", f32);
  auto c = k.scalar("eps_times_group_size", f32);
  const int64_t bt = s.block_t, n3 = padded(s.mixes);
  k.grid({k.blocks(out_mul, 0, bt)});
  auto t0 = k.block_id(0) * k.index(bt), zero = k.index(0);
  const std::vector<int64_t> box = {bt, 1, n3};
  for (int32_t g = 0; g < s.groups; ++g) {
    const std::vector<Value> at = {t0, k.index(g), zero};
    auto go = k.load(out_grad, at, box);
    auto sq = k.load(sqrsum, at, box);
    auto r = k.rsqrt(sq / group_size + eps);
    k.store(go * r, mul_grad, at);
    auto rg = k.reduce_sum(go * k.load(out_mul, at, box), 2); // (bt, 1, 1)
    // sq is the same in every column: the first's (bits moved, exact).
    auto sq1 = k.take(sq, 2, zero);
    auto r1 = k.rsqrt(sq1 / group_size + eps);
    k.store(rg * r1 / (sq1 + c) / k.constant(-2, f32), sq_grad, at);
  }
  return k.build();
}

} // namespace tilejit::mhc
