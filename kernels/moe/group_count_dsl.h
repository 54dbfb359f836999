// group_count_dsl.h - the counting that group_count's and aux_fi's DSL
// kernels share (defined in group_count.dsl.cpp).
#pragma once

#include "moe/group_count.h"

#include "tilejit/compiler/dsl.h"

#include <functional>
#include <string>

namespace tilejit::moe {

/// group_count's counting, which aux_fi shares: declares the grid over the flat
/// i64 `ids` (spec.block x spec.steps a block), counts, waits for the grid
/// before (`grid_wait`: the zeroing kernel below) and calls `add` with the
/// block's i32 counts of groups [first, first + spec.chunk), for each chunk
/// of spec.groups; ids outside [0, spec.groups) and past the end are not
/// counted.
void count_block_groups(
    dsl::KernelBuilder &k, const dsl::Tensor &ids, const GroupCountSpec &spec,
    const std::function<void(dsl::Value counts, int64_t first)> &add);

/// The kernel before the counting one, named `kernel`: one block zeroes the
/// 1-D output `name` (spec.groups elements, those past its size dropped);
/// programmatic.
Kernel zero_counts_kernel(const std::string &kernel, const std::string &name,
                          DType dtype, const GroupCountSpec &spec);

} // namespace tilejit::moe
