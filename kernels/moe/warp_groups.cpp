// warp_groups.cpp - groups of equal ids in each warp (warp_groups.h).
#include "moe/warp_groups.h"

namespace tilejit::moe {

dsl::Value lane_tile(dsl::KernelBuilder &k, int64_t warps, int dim) {
  return k.relayout(k.iota({warps, 32}, dim), 1);
}

dsl::Value lanes_below(dsl::KernelBuilder &k, int64_t warps) {
  auto one = k.constant(1, DType::u32);
  return k.shl(one, k.bitcast(lane_tile(k, warps, 1), DType::u32)) - one;
}

WarpGroups warp_groups(dsl::KernelBuilder &k, dsl::Value id, dsl::Value below) {
  return {id, k.match_any(id, 1), below};
}

dsl::Value group_leads(dsl::KernelBuilder &k, const WarpGroups &g) {
  return k.bit_and(k.eq(k.bit_and(g.mask, g.below), k.constant(0, DType::u32)),
                   k.ge(g.id, k.constant(0, DType::i32)));
}

void add_group_sizes(dsl::KernelBuilder &k, dsl::Value hist,
                     const WarpGroups &g) {
  const int64_t warps = g.id.shape()[0];
  k.atomic_add_at(k.bitcast(k.popcount(g.mask), DType::i32), hist,
                  {lane_tile(k, warps, 0), g.id}, group_leads(k, g));
}

} // namespace tilejit::moe
