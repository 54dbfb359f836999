// engram_sinkhorn.cpp - TileKernels 2.1's Engram Sinkhorn building blocks
// declared: engram_sinkhorn_momentum_update (grad, momentum buffer in
// place, f32 out), engram_sinkhorn_step (f32 matrix (R, Dh), the row
// scales in place, the row norms and num_partials rows of column sums of
// squares), engram_sinkhorn_step_reduce (those rows added in order) and
// engram_sinkhorn_finalize (the scaled matrix).
#include "engram/engram_sinkhorn.h"
#include "engram/reference.h"

#include "op/op.h"

namespace tilejit::engram {

namespace {

using ops::Layout;

/// `t` (N,) as (N, 1), or (N,) as (1, N) with `row`.
rt::TensorView as_2d(const rt::TensorView &t, bool row) {
  const int64_t n = t.shape[0];
  const int64_t shape[2] = {row ? 1 : n, row ? n : 1},
                strides[2] = {row ? n : 1, 1};
  return rt::TensorView::strided(t.data, t.dtype, shape, strides);
}

SinkhornRowSpec row_spec(const ops::Call &c,
                         std::initializer_list<std::string_view> tensors) {
  SinkhornRowSpec s;
  s.cols = static_cast<int32_t>(c.dim("Dh"));
  // The largest power of two up to 2048 that divides Dh (Dh % 256 == 0),
  // 8 columns a thread.
  s.chunk = 2048;
  while (s.cols % s.chunk != 0)
    s.chunk /= 2;
  s.threads = s.chunk / 8;
  s.vector_bytes = ops::vector_bytes(c, tensors);
  return s;
}

ops::TensorDecl f32_in(const char *name, const char *shape,
                       const char *doc = "") {
  return ops::input(name, {DType::f32}, shape, Layout::contiguous, doc);
}

ops::TensorDecl f32_out(const char *name, const char *shape,
                        const char *doc = "") {
  return ops::output(name, {DType::f32}, shape, Layout::contiguous, doc);
}

const std::vector<ops::DimRule> kDh = {{.dim = "Dh", .multiple = 256}};

} // namespace

const ops::OpDef &engram_sinkhorn_momentum_update_op() {
  static const ops::OpDef op = ops::make_op<SinkhornMomentumSpec>(
      {.name = "engram_sinkhorn_momentum_update",
       .summary = "the momentum buffer m = fma(m, beta1, (1 - beta1) g) in "
                  "place, and the Sinkhorn input (nesterov: fma(g, 1 - "
                  "beta1, beta1 m)) in f32",
       .tensors = {ops::input("grad", {DType::bf16, DType::f32}, "*",
                              Layout::contiguous),
                   ops::input("momentum_buffer", {DType::bf16, DType::f32}, "*",
                              Layout::contiguous),
                   ops::output_like("momentum_buffer_out", "momentum_buffer",
                                    "*", Layout::contiguous,
                                    "may be momentum_buffer"),
                   f32_out("sinkhorn_input", "*")},
       .params = {ops::real("beta1", 0.9, "the momentum"),
                  ops::flag("nesterov", true, "Nesterov's look-ahead")},
       .cli_shape = "*",
       .default_shape = {4096, 7168},
       .check =
           [](const ops::Call &c) {
             if (c.tensor("grad").numel() % 256 != 0)
               throw UserError(fmt::format(
                   "engram_sinkhorn_momentum_update: argument 'grad' has {} "
                   "elements; requires a multiple of 256",
                   c.tensor("grad").numel()));
           },
       .reference =
           [](const ops::HostCall &c) {
             HostTensor m = c.tensor("momentum_buffer").clone();
             HostTensor out = engram_sinkhorn_momentum_update_ref(
                 c.tensor("grad"), m, c.real("beta1"), c.flag("nesterov"));
             return std::vector{m, out};
           }},
      {[](const ops::Call &c) {
         SinkhornMomentumSpec s;
         s.grad = c.tensor("grad").dtype;
         s.buffer = c.tensor("momentum_buffer").dtype;
         s.nesterov = c.flag("nesterov") ? 1 : 0;
         bool aligned = true;
         for (const char *name : {"grad", "momentum_buffer",
                                  "momentum_buffer_out", "sinkhorn_input"})
           aligned = aligned && c.tensor(name).data % 16 == 0;
         s.vector_bytes = aligned ? 16 : 0;
         return s;
       },
       sinkhorn_momentum_kernel,
       [](const ops::Call &c, const SinkhornMomentumSpec &,
          ops::KernelArgs &args) {
         for (const char *name : {"grad", "momentum_buffer",
                                  "momentum_buffer_out", "sinkhorn_input"})
           args.flat(name, c.tensor(name));
         // 1 - beta1 in double, then f32 (TileKernels' constant).
         args.scalar("one_minus_beta1", 1.0 - c.real("beta1"));
       }});
  return op;
}
TILEJIT_REGISTER_OP(engram_sinkhorn_momentum_update_op);

const ops::OpDef &engram_sinkhorn_step_op() {
  static const ops::OpDef op = ops::make_op<SinkhornRowSpec>(
      {.name = "engram_sinkhorn_step",
       .summary = "a Sinkhorn row step: each row's norm of (rs * M) * cs, "
                  "the row scale over (norm + eps) in place, and each "
                  "block's column sums of the normalised rows' squares",
       .tensors = {f32_in("matrix", "R, Dh"), f32_in("row_scale", "R"),
                   f32_in("col_scale", "Dh"),
                   f32_out("row_scale_out", "R", "may be row_scale"),
                   f32_out("row_norm", "R"),
                   f32_out("col_sumsq_partial", "num_partials, Dh",
                           "a row per block of rows ceil(R / num_partials)")},
       .params = {ops::real("eps", 1e-8, 0.0, "added to each norm"),
                  ops::integer("num_partials", 396, 1, 1 << 20,
                               "blocks (TileKernels: 3 x the SMs)")},
       .dim_rules = kDh,
       .cli_shape = "R, Dh",
       .default_shape = {4096, 7168},
       .reference =
           [](const ops::HostCall &c) {
             HostTensor rs = c.tensor("row_scale").clone();
             EngramSinkhornStepResult r = engram_sinkhorn_step_ref(
                 c.tensor("matrix"), rs, c.tensor("col_scale"),
                 static_cast<float>(c.real("eps")), c.integer("num_partials"));
             return std::vector{rs, r.row_norm, r.col_sumsq_partial};
           }},
      {[](const ops::Call &c) {
         return row_spec(c, {"matrix", "col_scale", "col_sumsq_partial"});
       },
       sinkhorn_step_kernel,
       [](const ops::Call &c, const SinkhornRowSpec &, ops::KernelArgs &args) {
         args.tensor("col_scale_row", as_2d(c.tensor("col_scale"), true));
         args.tensor("row_norm_rows", as_2d(c.tensor("row_norm"), false));
         args.tensor("row_scale_out_rows",
                     as_2d(c.tensor("row_scale_out"), false));
       }});
  return op;
}
TILEJIT_REGISTER_OP(engram_sinkhorn_step_op);

const ops::OpDef &engram_sinkhorn_step_reduce_op() {
  static const ops::OpDef op = ops::make_op<SinkhornReduceSpec>(
      {.name = "engram_sinkhorn_step_reduce",
       .summary = "the step's partial column sums added in partial order: "
                  "(((0 + p_0) + p_1) + ...), exact",
       .tensors = {f32_in("col_sumsq_partial", "P, Dh"),
                   f32_out("col_sumsq", "Dh")},
       .dim_rules = kDh,
       .cli_shape = "P, Dh",
       .default_shape = {396, 7168},
       .reference =
           [](const ops::HostCall &c) {
             HostTensor out = HostTensor::zeros(
                 DType::f32, {c.tensor("col_sumsq_partial").size(1)});
             engram_sinkhorn_step_reduce_ref(c.tensor("col_sumsq_partial"),
                                             out);
             return std::vector{out};
           }},
      {[](const ops::Call &) {
         // Defaults: a column a thread, 64 rows in flight (P = 396 at 12
         // in flight and 256 columns a block, 28 blocks, moved 10 % of a
         // copy's bandwidth on an H100, session 63; 32 at 32: 32 %).
         return SinkhornReduceSpec{};
       },
       sinkhorn_step_reduce_kernel,
       [](const ops::Call &c, const SinkhornReduceSpec &,
          ops::KernelArgs &args) {
         args.tensor("col_sumsq_row", as_2d(c.tensor("col_sumsq"), true));
       }});
  return op;
}
TILEJIT_REGISTER_OP(engram_sinkhorn_step_reduce_op);

const ops::OpDef &engram_sinkhorn_finalize_op() {
  static const ops::OpDef op =
      ops::make_op<SinkhornRowSpec>(
          {.name = "engram_sinkhorn_finalize",
           .summary = "the Sinkhorn result: each row's iterate (rs * M) * cs "
                      "times alpha / (its norm + eps)",
           .tensors = {f32_in("matrix", "R, Dh"), f32_in("row_scale", "R"),
                       f32_in("col_scale", "Dh"), f32_out("out", "R, Dh")},
           .params = {ops::real("eps", 1e-8, 0.0, "added to each norm"),
                      ops::real("alpha", 1.0, "the result's row norm")},
           .dim_rules = kDh,
           .cli_shape = "R, Dh",
           .default_shape = {4096, 7168},
           .reference =
               [](const ops::HostCall &c) {
                 return std::vector{engram_sinkhorn_finalize_ref(
                     c.tensor("matrix"), c.tensor("row_scale"),
                     c.tensor("col_scale"), static_cast<float>(c.real("eps")),
                     static_cast<float>(c.real("alpha")))};
               }},
          {[](const ops::Call &c) {
             return row_spec(c, {"matrix", "col_scale", "out"});
           },
           sinkhorn_finalize_kernel,
           [](const ops::Call &c, const SinkhornRowSpec &,
              ops::KernelArgs &args) {
             args.tensor("col_scale_row", as_2d(c.tensor("col_scale"), true));
           }});
  return op;
}
TILEJIT_REGISTER_OP(engram_sinkhorn_finalize_op);

} // namespace tilejit::engram
