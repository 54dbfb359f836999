// dsl_warp_gpu_test.cpp - k.match_any and k.popcount (a lane's equals in
// its warp, its rank among them), k.atomic_add_at (a shared histogram),
// k.store_at (global and shared) and k.load_at from a shared tile, against
// the same computed on the CPU.
#include "dsl_gpu.h"

#include "common/abi.h"
#include "common/jit.h"

#include "tilejit/compiler/dsl.h"
#include "tilejit/runtime/buffer.h"

#include <catch2/catch.hpp>

#include <bit>
#include <random>
#include <vector>

using namespace tilejit;
using namespace tilejit::dsl_gpu;

namespace {

constexpr int kWarps = 4, kBins = 8, kHistRows = 128 / kBins;

/// A block of 4 warps, a row of ids (rows, 32) i32 a warp, a lane an id:
/// mask = match_any, rank = popcount(mask & lanes below), count =
/// popcount(mask); hist (blocks, 8) = the block's count of each id in
/// [0, 8) (a shared histogram, one atomic a group of equals from its first
/// lane; other ids dropped); reversed (rows, 32) = each row backwards,
/// through a shared tile a row a warp (sync_warp between the writes and
/// the reads) read at per-element positions (load_at) and
/// written to global memory at per-element positions (store_at), the
/// lanes whose id is negative left out.
Kernel warp_kernel() {
  dsl::KernelBuilder k("warp_ops", 32 * kWarps);
  auto ids = k.tensor("ids", DType::i32, 2);
  auto mask_out = k.tensor("mask", DType::u32, 2);
  auto rank_out = k.tensor("rank", DType::i32, 2);
  auto count_out = k.tensor("count", DType::i32, 2);
  auto hist_out = k.tensor("hist", DType::i32, 2);
  auto reversed = k.tensor("reversed", DType::i32, 1);
  auto b = k.block_id(0), zero = k.index(0);
  auto row = b * k.index(kWarps);
  auto id = k.relayout(k.load(ids, {row, zero}, {kWarps, 32}), 1);
  auto lane = k.relayout(k.iota({kWarps, 32}, 1), 1);
  auto warp = k.relayout(k.iota({kWarps, 32}, 0), 1);
  auto mask = k.match_any(id, 1);
  auto one = k.constant(1, DType::u32);
  auto below = k.shl(one, k.bitcast(lane, DType::u32)) - one;
  auto rank = k.bitcast(k.popcount(k.bit_and(mask, below)), DType::i32);
  k.store(mask, mask_out, {row, zero});
  k.store(rank, rank_out, {row, zero});
  k.store(k.bitcast(k.popcount(mask), DType::i32), count_out, {row, zero});

  auto hist = k.alloc_shared(DType::i32, {kHistRows, kBins});
  k.store(k.full({kHistRows, kBins}, 0, DType::i32), hist, {zero, zero});
  k.barrier();
  auto first = k.eq(rank, k.constant(0, DType::i32));
  k.atomic_add_at(k.bitcast(k.popcount(mask), DType::i32), hist,
                  {k.constant(0, DType::i32), id}, first);
  k.barrier();
  k.store(k.reduce_sum(k.load(hist, {zero, zero}, {kHistRows, kBins}), 0),
          hist_out, {b, zero});

  // A row a warp: each warp reads only its own row back, so a warp
  // barrier orders the writes before the reads.
  auto table = k.alloc_shared(DType::i32, {kWarps, 32});
  k.store_at(id, table, {warp, lane});
  k.sync_warp();
  auto back = k.load_at(table, {warp, k.constant(31, DType::i32) - lane});
  auto flat = (k.cast(row, DType::i32) + warp) * k.constant(32, DType::i32);
  k.store_at(back, reversed, {flat + lane},
             k.ge(back, k.constant(0, DType::i32)));
  return k.build();
}

} // namespace

TEST_CASE("match_any, popcount, atomic_add_at, store_at and load_at of "
          "shared tiles compute a warp's equals, ranks and a histogram",
          "[dsl][warp]") {
  const ops::LoadedKernel &kernel = ops::load_kernel(
      ops::make_key("test_warp_ops"), [] { return warp_kernel(); });
  const int64_t blocks = 7, rows = blocks * kWarps, n = rows * 32;
  std::mt19937_64 gen(Catch::rngSeed());
  // Mostly in [0, 8) (the histogram's), some negative or past it; every
  // row of one id, or of all different ones, among them.
  std::uniform_int_distribution<int32_t> pick(-2, kBins + 1);
  std::vector<int32_t> id(n);
  for (int64_t i = 0; i < n; ++i)
    id[i] = i < 32 ? 3 : i < 64 ? static_cast<int32_t>(i % 32) : pick(gen);
  rt::DeviceBuffer dids(n * 4), dmask(n * 4), drank(n * 4), dcount(n * 4),
      dhist(blocks * kBins * 4), drev(n * 4);
  dids.upload(id.data(), n * 4);
  const std::vector<int32_t> minus(n, -7);
  drev.upload(minus.data(), n * 4);
  const int64_t shape[2] = {rows, 32}, hshape[2] = {blocks, kBins},
                flat[1] = {n};
  launch_rows(
      kernel, rows,
      [&](rt::ArgPack &args) {
        ops::push_tensor(
            args, rt::TensorView::contiguous(dids.ptr(), DType::i32, shape));
        ops::push_tensor(
            args, rt::TensorView::contiguous(dmask.ptr(), DType::u32, shape));
        for (rt::DeviceBuffer *out : {&drank, &dcount})
          ops::push_tensor(
              args, rt::TensorView::contiguous(out->ptr(), DType::i32, shape));
        ops::push_tensor(
            args, rt::TensorView::contiguous(dhist.ptr(), DType::i32, hshape));
        ops::push_tensor(
            args, rt::TensorView::contiguous(drev.ptr(), DType::i32, flat));
      },
      /*threads=*/32 * kWarps, /*block_rows=*/kWarps);
  std::vector<uint32_t> mask(n);
  std::vector<int32_t> rank(n), count(n), hist(blocks * kBins), rev(n);
  dmask.download(mask.data(), n * 4);
  drank.download(rank.data(), n * 4);
  dcount.download(count.data(), n * 4);
  dhist.download(hist.data(), hist.size() * 4);
  drev.download(rev.data(), n * 4);

  size_t bad = 0;
  std::vector<int32_t> want_hist(blocks * kBins, 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int l = 0; l < 32; ++l) {
      const int64_t i = r * 32 + l;
      uint32_t want = 0;
      for (int j = 0; j < 32; ++j)
        if (id[r * 32 + j] == id[i])
          want |= 1u << j;
      const int want_rank = std::popcount(want & ((1u << l) - 1));
      const int32_t want_rev =
          id[r * 32 + 31 - l] >= 0 ? id[r * 32 + 31 - l] : -7;
      if (id[i] >= 0 && id[i] < kBins)
        ++want_hist[(r / kWarps) * kBins + id[i]];
      if ((mask[i] != want || rank[i] != want_rank ||
           count[i] != std::popcount(want) || rev[i] != want_rev) &&
          bad++ < 5)
        UNSCOPED_INFO("[" << r << ", " << l << "] id " << id[i] << ": mask "
                          << mask[i] << " rank " << rank[i] << " count "
                          << count[i] << " reversed " << rev[i] << ", want "
                          << want << " " << want_rank << " "
                          << std::popcount(want) << " " << want_rev);
    }
  CHECK(bad == 0);
  CHECK(mask[0] == 0xffffffffu);  // the row of one id
  CHECK(mask[32 + 5] == 1u << 5); // the row of all different ones
  CHECK(hist == want_hist);
}
