// warp_groups.h - groups of equal ids in each warp, as MoE's counting and
// ranking kernels use them (get_fused_mapping, group_count): a (warps, 32)
// tile a lane an element, each lane's match mask, its rank among its equals
// before it, and the group's first lane adding the group's size to a shared
// histogram (defined in warp_groups.cpp).
#pragma once

#include "tilejit/compiler/dsl.h"

namespace tilejit::moe {

/// A (warps, 32) i32 tile a lane an element: its warp (dim 0) or lane (1).
dsl::Value lane_tile(dsl::KernelBuilder &k, int64_t warps, int dim);

/// The lanes below each lane of a (warps, 32) tile, (1 << lane) - 1 (u32).
dsl::Value lanes_below(dsl::KernelBuilder &k, int64_t warps);

/// Each lane's id (i32, -1: none), the lanes of its warp with the same id
/// and the lanes below it (lanes_below's, computed once a kernel), u32.
struct WarpGroups {
  dsl::Value id, mask, below;
};
WarpGroups warp_groups(dsl::KernelBuilder &k, dsl::Value id, dsl::Value below);

/// Each group's first lane of an id other than -1.
dsl::Value group_leads(dsl::KernelBuilder &k, const WarpGroups &g);

/// Adds each group's size to hist[warp, id] (a (warps, bins) shared i32
/// tile) from its first lane; ids outside the tile are dropped.
void add_group_sizes(dsl::KernelBuilder &k, dsl::Value hist,
                     const WarpGroups &g);

} // namespace tilejit::moe
