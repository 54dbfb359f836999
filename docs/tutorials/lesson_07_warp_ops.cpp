// lesson_07_warp_ops.cpp - Tutorial 7: counting and ranking in a warp. A
// histogram of expert ids and each id's rank among its equals, the two
// steps of MoE routing's expert-major layout (kernels/moe/
// get_fused_mapping.dsl.cpp). Built and run by the tests.
//
// A (warps, 32) tile laid out a lane an element (k.relayout(..., 1)) puts
// each warp's 32 ids in its 32 lanes. k.match_any(ids, 1) gives every lane
// the mask of the lanes of its warp holding the same id (CUDA's
// __match_any_sync); with the mask of the lanes below it, popcount gives
// the lane's rank among its equals and the size of its group. The group's
// first lane (rank 0) adds the size to a shared histogram: one atomic a
// distinct id, not one an element (k.atomic_add_at, a shared tile indexed
// per element). k.load_at and k.store_at read and write shared tiles and
// tensors at positions computed per element.
#include "tilejit/compiler/compile.h"
#include "tilejit/compiler/dsl.h"

#include <cstdio>
#include <string>

using namespace tilejit;

// For ids (rows, 32) i32 in [0, bins) (others ignored), 4 rows a block: rank
// (rows, 32) = each id's rank among the equal ids before it in its row, and
// counts (bins,) += the block's count of each id.
Kernel rank_and_count_kernel(int64_t bins) {
  constexpr int warps = 4;
  dsl::KernelBuilder k("rank_and_count", /*threads=*/32 * warps);
  auto ids = k.tensor("ids", DType::i32, 2);
  auto rank_out = k.tensor("rank", DType::i32, 2);
  auto counts = k.tensor("counts", DType::i32, 1);
  auto row = k.block_id(0) * k.index(warps), zero = k.index(0);

  // A warp a row, a lane an id.
  auto id = k.relayout(k.load(ids, {row, zero}, {warps, 32}), 1);
  auto lane = k.relayout(k.iota({warps, 32}, 1), 1);
  auto warp = k.relayout(k.iota({warps, 32}, 0), 1);
  auto mask = k.match_any(id, 1);
  auto one = k.constant(1, DType::u32);
  auto below = k.shl(one, k.bitcast(lane, DType::u32)) - one;
  auto rank = k.bitcast(k.popcount(k.bit_and(mask, below)), DType::i32);
  k.store(rank, rank_out, {row, zero});

  // A histogram a row a warp: each group's first lane adds its size.
  auto hist = k.alloc_shared(DType::i32, {warps, bins});
  k.store(k.full({warps, bins}, 0, DType::i32), hist, {zero, zero});
  k.barrier();
  auto first = k.bit_and(k.eq(rank, k.constant(0, DType::i32)),
                         k.lt(id, k.constant(bins, DType::i32)));
  k.atomic_add_at(k.bitcast(k.popcount(mask), DType::i32), hist, {warp, id},
                  first);
  k.barrier();
  // The warps' rows summed, added to the counts of every block.
  k.atomic_add(
      k.reshape(k.reduce_sum(k.load(hist, {zero, zero}, {warps, bins}), 0),
                {bins}),
      counts, {zero});
  return k.build();
}

int main() {
  CompiledKernel compiled = compile(rank_and_count_kernel(32));
  // One warp match and a shared atomic per element, no compare per bin.
  const std::string &ptx = compiled.ptx;
  const bool match = ptx.find("match.any.sync.b32") != std::string::npos;
  const bool popc = ptx.find("popc.b32") != std::string::npos;
  const bool atomic = ptx.find("atom.shared.add") != std::string::npos;
  std::printf("match.any.sync: %s, popc: %s, shared atomic: %s\n",
              match ? "yes" : "no", popc ? "yes" : "no", atomic ? "yes" : "no");
  if (!match || !popc || !atomic)
    return 1;
  std::printf("%s\n", rank_and_count_kernel(32).tile_ir().c_str());
  return 0;
}
