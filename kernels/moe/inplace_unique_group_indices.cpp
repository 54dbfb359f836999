// inplace_unique_group_indices.cpp - inplace_unique_group_indices declared:
// i64 group ids (T, K), each row's repeats made -1; a thread a row.
#include "moe/inplace_unique_group_indices.h"
#include "moe/reference.h"

#include "op/op.h"

namespace tilejit::moe {

static UniqueGroupIndicesSpec spec(const ops::Call &c) {
  UniqueGroupIndicesSpec s;
  s.topk = static_cast<int32_t>(c.dim("K"));
  return s;
}

const ops::OpDef &inplace_unique_group_indices_op() {
  static const ops::OpDef op =
      ops::make_op<UniqueGroupIndicesSpec>(
          {.name = "inplace_unique_group_indices",
           .summary = "each row's repeated group ids made -1, the first kept "
                      "(i64; out may be the input)",
           .tensors = {ops::input("group_indices", {DType::i64}, "T, K",
                                  ops::Layout::contiguous),
                       ops::output("out", {DType::i64}, "T, K",
                                   ops::Layout::contiguous)},
           .params = {ops::integer("num_groups", 64, 1, 128,
                                   "groups (ids below align(num_groups, 64))")},
           .dim_rules = {{.dim = "K", .min = 1, .max = 32}},
           .cli_shape = "T, K",
           .default_shape = {21760, 8},
           .reference =
               [](const ops::HostCall &c) {
                 ref::HostTensor out = c.tensor("group_indices").clone();
                 inplace_unique_group_indices_ref(out, c.integer("num_groups"));
                 return std::vector{out};
               }},
          {spec, inplace_unique_group_indices_kernel});
  return op;
}
TILEJIT_REGISTER_OP(inplace_unique_group_indices_op);

void inplace_unique_group_indices(const rt::TensorView &group_indices,
                                  int64_t num_groups, const rt::TensorView &out,
                                  CUstream stream) {
  inplace_unique_group_indices_op().call({group_indices, out}, {num_groups},
                                         stream);
}

} // namespace tilejit::moe
