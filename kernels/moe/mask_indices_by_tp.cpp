// mask_indices_by_tp.cpp - mask_indices_by_tp declared: i32/i64 expert
// indices (T, K) to those of one TP rank, renumbered; elementwise.
#include "moe/mask_indices_by_tp.h"
#include "moe/reference.h"

#include "op/op.h"

namespace tilejit::moe {

static MaskIndicesByTpSpec spec(const ops::Call &c) {
  MaskIndicesByTpSpec s;
  s.dtype = c.tensor("indices").dtype;
  s.per_gpu = static_cast<int32_t>(c.integer("n") / c.integer("num_ep_ranks"));
  s.tp_rank = static_cast<int32_t>(c.integer("tp_rank"));
  s.num_tp_ranks = static_cast<int32_t>(c.integer("num_tp_ranks"));
  return s;
}

static void check(const ops::Call &c) {
  const std::string_view op = c.op().name;
  const int64_t n = c.integer("n"), ep = c.integer("num_ep_ranks");
  if (n < ep)
    throw UserError(fmt::format("{}: argument 'n' is {}; requires at least "
                                "num_ep_ranks = {} (one or more experts a "
                                "rank)",
                                op, n, ep));
  const int64_t rank = c.integer("tp_rank"), ranks = c.integer("num_tp_ranks");
  if (rank >= ranks)
    throw UserError(fmt::format("{}: argument 'tp_rank' is {}; requires "
                                "tp_rank < num_tp_ranks = {}",
                                op, rank, ranks));
}

/// indices and masked flattened to (T * K,).
static void flat(const ops::Call &c, const MaskIndicesByTpSpec &,
                 ops::KernelArgs &args) {
  args.flat("flat_indices", c.tensor("indices"));
  args.flat("flat_masked", c.tensor("masked"));
}

const ops::OpDef &mask_indices_by_tp_op() {
  static const ops::OpDef op =
      ops::make_op<MaskIndicesByTpSpec>(
          {.name = "mask_indices_by_tp",
           .summary = "expert indices of one TP rank's experts renumbered "
                      "compactly, -1 elsewhere (i32 or i64)",
           .tensors = {ops::input("indices", {DType::i64, DType::i32}, "T, K",
                                  ops::Layout::contiguous),
                       ops::output_like("masked", "indices", "T, K")},
           .params = {ops::integer("n", 256, 1, 1 << 30, "experts in all"),
                      ops::integer("num_ep_ranks", 8, 1, 1 << 20,
                                   "expert-parallel ranks"),
                      ops::integer("tp_rank", 0, 0, 1 << 20,
                                   "this tensor-parallel rank"),
                      ops::integer("num_tp_ranks", 2, 1, 1 << 20,
                                   "tensor-parallel ranks")},
           .cli_shape = "T, K",
           .default_shape = {21760, 8},
           .check = check,
           .reference =
               [](const ops::HostCall &c) {
                 return std::vector{mask_indices_by_tp_ref(
                     c.tensor("indices"), c.integer("n"),
                     c.integer("num_ep_ranks"), c.integer("tp_rank"),
                     c.integer("num_tp_ranks"))};
               }},
          {spec, mask_indices_by_tp_kernel, flat});
  return op;
}
TILEJIT_REGISTER_OP(mask_indices_by_tp_op);

void mask_indices_by_tp(const rt::TensorView &indices, int64_t n,
                        int64_t num_ep_ranks, int64_t tp_rank,
                        int64_t num_tp_ranks, const rt::TensorView &masked,
                        CUstream stream) {
  mask_indices_by_tp_op().call(
      {indices, masked}, {n, num_ep_ranks, tp_rank, num_tp_ranks}, stream);
}

} // namespace tilejit::moe
