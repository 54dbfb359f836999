// group_count_dsl.h - the counting that group_count's and aux_fi's DSL
// kernels share (defined in group_count.dsl.cpp).
#pragma once

#include "moe/group_count.h"

#include "tilejit/compiler/dsl.h"

#include <functional>

namespace tilejit::moe {

/// group_count's counting, which aux_fi shares: declares the grid over the flat
/// i64 `ids` (spec.block x spec.steps a block) and calls `add` with the block's
/// i32 counts of groups [first, first + spec.chunk), for each chunk of
/// spec.groups; ids outside [0, spec.groups) and past the end are not counted.
void count_block_groups(
    dsl::KernelBuilder &k, const dsl::Tensor &ids, const GroupCountSpec &spec,
    const std::function<void(dsl::Value counts, int64_t first)> &add);

} // namespace tilejit::moe
