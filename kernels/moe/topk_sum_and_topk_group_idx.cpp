// topk_sum_and_topk_group_idx.cpp - topk_sum_and_topk_group_idx declared:
// f32 scores (T, G, N) to the i64 ids (T, num_topk_groups) of each token's
// best groups; a block ranks the groups of up to 32 tokens.
#include "moe/topk_sum_and_topk_group_idx.h"
#include "moe/reference.h"

#include "op/op.h"

#include <algorithm>
#include <bit>

namespace tilejit::moe {

namespace {

/// G padded to a power of two of at least 4, N to a power of two.
int64_t padded_groups(int64_t g) {
  return static_cast<int64_t>(
      std::bit_ceil(static_cast<uint64_t>(std::max<int64_t>(g, 4))));
}
int64_t padded_size(int64_t n) {
  return static_cast<int64_t>(
      std::bit_ceil(static_cast<uint64_t>(std::max<int64_t>(n, 1))));
}

TopkGroupSpec spec(const ops::Call &c) {
  TopkGroupSpec s;
  s.real_groups = static_cast<int32_t>(c.dim("G"));
  s.real_size = static_cast<int32_t>(c.dim("N"));
  s.groups = static_cast<int32_t>(padded_groups(s.real_groups));
  s.size = static_cast<int32_t>(padded_size(s.real_size));
  s.sum = static_cast<int32_t>(c.integer("num_topk_sum"));
  s.topk = static_cast<int32_t>(c.integer("num_topk_groups"));
  s.out_cols =
      static_cast<int32_t>(padded_groups(s.topk)); // a power of two, at least 4
  // Whole groups a thread of 128 (N <= 64: at least one each), up to 64
  // scores and 64 group pairs a thread, up to 32 tokens a block.
  s.rows =
      std::min({32, 8192 / (s.groups * s.size), 8192 / (s.groups * s.groups)});
  s.threads = 128;
  s.vector_bytes = ops::vector_bytes(c, {"scores"});
  return s;
}

void check(const ops::Call &c) {
  const int64_t g = c.dim("G"), n = c.dim("N");
  if (n > 64 || padded_groups(g) * padded_size(n) > 1024)
    throw UserError(fmt::format(
        "{}: argument 'scores' has shape [{}, {}, {}] (G = {}, N = {}); "
        "requires N <= 64, and G and N padded to powers of two (G to at "
        "least 4) at most 1024 scores a token",
        c.op().name, c.dim("T"), g, n, g, n));
}

} // namespace

const ops::OpDef &topk_sum_and_topk_group_idx_op() {
  static const ops::OpDef op =
      ops::make_op<TopkGroupSpec>(
          {.name = "topk_sum_and_topk_group_idx",
           .summary =
               "each token's num_topk_groups best expert groups (i64), "
               "best first, ties to the lower group: a group's score its "
               "top one or two scores summed",
           .tensors = {ops::input("scores", {DType::f32}, "T, G, N",
                                  ops::Layout::contiguous,
                                  "G groups of N experts a token"),
                       ops::output("group_idx", {DType::i64},
                                   "T, num_topk_groups")},
           .params = {ops::integer("num_topk_sum", 2, 1, 2,
                                   "scores summed a group: 1 or 2"),
                      ops::integer("num_topk_groups", 4, 1,
                                   32, "groups kept a token")},
           .dim_rules = {{.dim = "G", .min = 1, .max = 32},
                         {.dim = "num_topk_sum", .at_most = "N"},
                         {.dim = "num_topk_groups", .at_most = "G"}},
           .cli_shape = "T, G, N",
           .default_shape = {8001, 8, 32},
           .check = check,
           .reference =
               [](const ops::HostCall &c) {
                 return std::vector{topk_sum_and_topk_group_idx_ref(
                     c.tensor("scores"), c.integer("num_topk_sum"),
                     c.integer("num_topk_groups"))};
               }},
          {spec, topk_sum_and_topk_group_idx_kernel});
  return op;
}
TILEJIT_REGISTER_OP(topk_sum_and_topk_group_idx_op);

void topk_sum_and_topk_group_idx(const rt::TensorView &scores,
                                 int64_t num_topk_sum, int64_t num_topk_groups,
                                 const rt::TensorView &group_idx,
                                 CUstream stream) {
  topk_sum_and_topk_group_idx_op().call(
      {scores, group_idx}, {num_topk_sum, num_topk_groups}, stream);
}

} // namespace tilejit::moe
