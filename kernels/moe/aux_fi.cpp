// aux_fi.cpp - aux_fi declared: i64 expert ids (T, K) to the f32 fraction
// of the ids each expert got, scaled by E / num_aux_topk; group_count's
// counting, each block's fractions added atomically to the output, which
// a kernel before zeroes.
#include "moe/aux_fi.h"
#include "moe/reference.h"

#include "op/op.h"

namespace tilejit::moe {

static GroupCountSpec spec(const ops::Call &c) {
  return group_count_spec(c.integer("num_experts"),
                          c.tensor("topk_idx").numel());
}

/// topk_idx flattened to (T * K,), and the denominator T * num_aux_topk
/// (an integer, made f32 as TileKernels does).
static void views(const ops::Call &c, const GroupCountSpec &,
                  ops::KernelArgs &args) {
  args.flat("flat_topk_idx", c.tensor("topk_idx"));
  args.scalar("denominator",
              static_cast<double>(c.dim("T") * c.integer("num_aux_topk")));
}

const ops::OpDef &aux_fi_op() {
  static const ops::OpDef op =
      ops::make_op<GroupCountSpec>(
          {.name = "aux_fi",
           .summary = "each expert's share of the top-k ids times E / "
                      "num_aux_topk (the auxiliary loss's fi), f32",
           .tensors = {ops::input("topk_idx", {DType::i64}, "T, K",
                                  ops::Layout::contiguous),
                       ops::output("fi", {DType::f32}, "num_experts")},
           .params = {ops::integer("num_experts", 256, 1, 1024, "experts"),
                      ops::integer("num_aux_topk", 8, 1, 1 << 20,
                                   "top-k of the auxiliary loss")},
           .cli_shape = "T, K",
           .default_shape = {21760, 8},
           .reference =
               [](const ops::HostCall &c) {
                 return std::vector{aux_fi_ref(c.tensor("topk_idx"),
                                               c.integer("num_experts"),
                                               c.integer("num_aux_topk"))};
               }},
          {.spec = spec,
           .kernel = aux_fi_zero_kernel,
           .views = views,
           .then = {aux_fi_kernel}});
  return op;
}
TILEJIT_REGISTER_OP(aux_fi_op);

void aux_fi(const rt::TensorView &topk_idx, int64_t num_experts,
            int64_t num_aux_topk, const rt::TensorView &fi, CUstream stream) {
  aux_fi_op().call({topk_idx, fi}, {num_experts, num_aux_topk}, stream);
}

} // namespace tilejit::moe
