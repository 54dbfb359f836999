// gate_dsl.h - What the MoE routers share (top2_sum_gate and TileKernels
// 2.1's moe_topk_gate_forward): the DSL steps (the K rounds of top-k, the
// logical -> physical expert of each slot) and their outputs' shape rule.
// Defined in gate_dsl.cpp.
#pragma once

#include "op/op_def.h"
#include "tilejit/compiler/dsl.h"

#include <string_view>

#include <vector>

namespace tilejit::moe {

/// K rounds over the (rows, width) selection scores `sel` (-inf where no
/// expert): the row max, the smallest column `col` holding it, knocked out
/// (-inf) before the next round. The picks, (rows, 1) i32 each.
std::vector<dsl::Value> top_k_rounds(dsl::KernelBuilder &k, dsl::Value sel,
                                     dsl::Value col, int topk);

/// The (rows, 32) slot tile's picks: column j < picks.size() holds pick j,
/// the others -1 (i32).
dsl::Value slots_of(dsl::KernelBuilder &k, const std::vector<dsl::Value> &picks,
                    dsl::Value slot);

/// The physical expert (i32) of each slot's logical `expert` (i32): copy
/// (ep_rank + token * 23333) mod logical_count[expert] of its row of
/// to_physical_map (the hash in i64; a count below 1, invalid, taken as 1).
dsl::Value physical_expert(dsl::KernelBuilder &k, dsl::Value expert,
                           dsl::Value token, const dsl::Tensor &count,
                           const dsl::Tensor &map, dsl::Value ep_rank);

/// The routers' outputs topk_idx (i64) and topk_weights (f32): (T, K + S),
/// S the shared experts when use_shared_as_routed (an OpDef's shape_of).
ops::TensorShape router_slots(std::string_view output, const ops::ShapeArgs &a);

} // namespace tilejit::moe
