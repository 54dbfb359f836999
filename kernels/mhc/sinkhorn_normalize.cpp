// sinkhorn_normalize.cpp - sinkhorn_normalize declared: f32 (..., n, n)
// seen as (B, n, n), 1024 elements a block of 128 threads.
#include "mhc/sinkhorn_normalize.h"
#include "mhc/reference.h"

#include "op/op.h"

#include <bit>

namespace tilejit::mhc {

static SinkhornSpec spec(const ops::Call &c) {
  SinkhornSpec s;
  const int64_t n = c.dim("n");
  s.n = static_cast<int32_t>(n);
  s.repeat = static_cast<int32_t>(c.integer("repeat"));
  s.eps_bits = std::bit_cast<uint32_t>(static_cast<float>(c.real("eps")));
  // 1024 elements a block of 128 threads: 8 each.
  s.block_b = static_cast<int32_t>(std::max<int64_t>(1, 1024 / (n * n)));
  s.vector_bytes = 16; // every (..., n, n) tensor's rows 16-byte aligned
  for (const ops::TensorDecl &d : c.op().tensors)
    if (!ops::rows_aligned(c.tensor(d.name), 16))
      s.vector_bytes = 0;
  return s;
}

/// The forward's and backward's parameters.
static std::vector<ops::ParamDecl> sinkhorn_params() {
  return {ops::integer("repeat", 10, 1, 100, "normalisation rounds"),
          ops::real("eps", 1e-6, 0, "added to every sum")};
}

static void check_power_of_two(const ops::Call &c) {
  if (!std::has_single_bit(static_cast<uint64_t>(c.dim("n"))))
    throw UserError(fmt::format("{}: argument 'x' has {} x {} matrices; "
                                "requires n a power of two",
                                c.op().name, c.dim("n"), c.dim("n")));
}

/// The (..., n, n) tensors as (B, n, n).
static void batches(const ops::Call &c, const SinkhornSpec &s,
                    ops::KernelArgs &args) {
  for (const ops::TensorDecl &d : c.op().tensors) {
    const rt::TensorView &t = c.tensor(d.name);
    const int64_t shape[3] = {t.numel() / (int64_t{s.n} * s.n), s.n, s.n};
    args.tensor(d.name, rt::TensorView::contiguous(t.data, t.dtype, shape));
  }
}

const ops::OpDef &sinkhorn_normalize_op() {
  static const ops::OpDef op =
      ops::make_op<SinkhornSpec>(
          {.name = "sinkhorn_normalize",
           .summary =
               "Sinkhorn normalisation (softmax, then alternating column "
               "and row normalisation) of f32 (..., n, n) matrices, "
               "forward",
           .tensors = {ops::input("x", {DType::f32}, "*, n, n",
                                  ops::Layout::contiguous),
                       ops::output("out", {DType::f32}, "*, n, n")},
           .params = sinkhorn_params(),
           .dim_rules = {{.dim = "n", .min = 1, .max = 32}},
           .cli_shape = "*, n, n",
           .default_shape = {2, 4096, 4, 4},
           .check = check_power_of_two,
           .reference =
               [](const ops::HostCall &c) {
                 return std::vector{sinkhorn_normalize_ref(
                     c.tensor("x"), static_cast<int>(c.integer("repeat")),
                     static_cast<float>(c.real("eps")))};
               }},
          {spec, sinkhorn_normalize_kernel, batches});
  return op;
}
TILEJIT_REGISTER_OP(sinkhorn_normalize_op);

const ops::OpDef &mhc_sinkhorn_bwd_op() {
  static const ops::OpDef op = ops::make_op<SinkhornSpec>(
      {.name = "mhc_sinkhorn_bwd",
       .summary = "sinkhorn_normalize's backward (TileKernels 2.1's "
                  "mhc_sinkhorn_bwd): the input's gradient of f32 (..., n, "
                  "n) matrices, the forward recomputed",
       .tensors = {ops::input("grad_output", {DType::f32}, "*, n, n",
                              ops::Layout::contiguous),
                   ops::input("x", {DType::f32}, "*, n, n",
                              ops::Layout::contiguous, "the forward's input"),
                   ops::output("grad_input", {DType::f32}, "*, n, n")},
       .params = sinkhorn_params(),
       .dim_rules = {{.dim = "n", .min = 1, .max = 32}},
       .cli_shape = "*, n, n",
       .default_shape = {2, 4096, 4, 4},
       .check = check_power_of_two,
       .reference =
           [](const ops::HostCall &c) {
             return std::vector{sinkhorn_normalize_bwd_ref(
                 c.tensor("grad_output"), c.tensor("x"),
                 static_cast<int>(c.integer("repeat")),
                 static_cast<float>(c.real("eps")))};
           }},
      {spec, mhc_sinkhorn_bwd_kernel, batches});
  return op;
}
TILEJIT_REGISTER_OP(mhc_sinkhorn_bwd_op);

void sinkhorn_normalize(const rt::TensorView &x, const rt::TensorView &out,
                        int repeat, float eps, CUstream stream) {
  sinkhorn_normalize_op().call(
      {x, out}, {int64_t{repeat}, static_cast<double>(eps)}, stream);
}

} // namespace tilejit::mhc
