// group_count.cpp - group_count declared: i64 group ids (T, K) to the i32
// count of each of num_groups groups; the output zeroed, then a block's
// counts added atomically.
#include "moe/group_count.h"
#include "moe/reference.h"

#include "op/op.h"
#include "op/zero_output.h"

#include <algorithm>
#include <bit>

namespace tilejit::moe {

GroupCountSpec group_count_spec(int64_t num_groups, int64_t ids) {
  GroupCountSpec s;
  // Bins in whole chunks of 32 (those past num_groups are dropped): each
  // warp's row of the histogram summed 32 columns at a time.
  s.groups =
      static_cast<int32_t>((std::max<int64_t>(num_groups, 1) + 31) / 32 * 32);
  s.chunk = 32;
  s.threads = 256;
  s.block = s.threads; // an id a thread a step
  // Every group's count is added once a block, all blocks on one address
  // each: up to 16 steps a block, so that about two blocks an SM add
  // (fewer atomics on each address).
  constexpr int64_t kBlocks = 2 * 132; // two a streaming multiprocessor of
                                       // the H200's 132 (a tuning target)
  const int64_t per_block = std::max<int64_t>(ids / kBlocks, 1);
  s.steps = static_cast<int32_t>(
      std::clamp<int64_t>((per_block + s.block - 1) / s.block, 1, 16));
  return s;
}

static GroupCountSpec spec(const ops::Call &c) {
  return group_count_spec(c.integer("num_groups"),
                          c.tensor("group_idx").numel());
}

/// group_idx flattened to (T * K,).
static void flat(const ops::Call &c, const GroupCountSpec &,
                 ops::KernelArgs &args) {
  args.flat("flat_group_idx", c.tensor("group_idx"));
}

const ops::OpDef &group_count_op() {
  static const ops::OpDef op = ops::make_op<GroupCountSpec>(
      {.name = "group_count",
       .summary = "the count of each group id in [0, num_groups) of an i64 "
                  "(T, K) index tensor (-1 not counted), i32",
       .tensors = {ops::input("group_idx", {DType::i64}, "T, K",
                              ops::Layout::contiguous),
                   ops::output("counts", {DType::i32}, "num_groups")},
       .params = {ops::integer("num_groups", 32, 1, 1024, "groups counted")},
       .cli_shape = "T, K",
       .default_shape = {21760, 8},
       .special = ops::zero_before_kernel("counts"),
       .reference =
           [](const ops::HostCall &c) {
             return std::vector{group_count_ref(c.tensor("group_idx"),
                                                c.integer("num_groups"))};
           }},
      {spec, group_count_kernel, flat});
  return op;
}
TILEJIT_REGISTER_OP(group_count_op);

void group_count(const rt::TensorView &group_idx, int64_t num_groups,
                 const rt::TensorView &counts, CUstream stream) {
  group_count_op().call({group_idx, counts}, {num_groups}, stream);
}

} // namespace tilejit::moe
