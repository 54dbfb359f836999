// norm_forward.cpp - norm_forward declared (TileKernels 2.1's RMSNorm
// forward): x bf16 or f32 (*, H), an optional weight (H,) and residual
// (h = x + residual, written to residual_out) to out = (h * rstd) *
// (weight * out_scale) in x's dtype and, when asked, rstd (*).
#include "quant/norm_forward.h"
#include "quant/norm_chunk.h"
#include "quant/reference.h"

#include "op/op.h"

#include <algorithm>
#include <bit>

namespace tilejit::quant {

namespace {

using ops::Layout;

void views(const ops::Call &c, const NormForwardSpec &, ops::KernelArgs &args) {
  bind_norm_rows(c, args);
  args.tensor("out_rows", norm_rows(c, "out", c.dim("H")));
}

} // namespace

void check_norm_residual(const ops::Call &c) {
  if (c.has("residual") != c.has("residual_out"))
    throw UserError(fmt::format(
        "{}: argument '{}' is passed without '{}'; requires both or neither",
        c.op().name, c.has("residual") ? "residual" : "residual_out",
        c.has("residual") ? "residual_out" : "residual"));
}

NormForwardSpec norm_forward_spec(const ops::Call &c) {
  NormForwardSpec s;
  s.dtype = c.tensor("x").dtype;
  s.hidden = static_cast<int32_t>(c.dim("H"));
  // 8 columns a thread (norm_chunk.h).
  s.chunk = norm_chunk(s.hidden, 256);
  s.threads = std::max(32, s.chunk / 8);
  s.weight = c.has("weight") ? 1 : 0;
  s.residual = c.has("residual") ? 1 : 0;
  s.rstd = c.has("rstd") ? 1 : 0;
  return s;
}

rt::TensorView norm_rows(const ops::Call &c, const char *name, int64_t cols) {
  const rt::TensorView &t = c.tensor(name);
  const int64_t n = cols == 0 ? 0 : t.numel() / cols;
  const int64_t shape[2] = {n, cols}, strides[2] = {cols, 1};
  return rt::TensorView::strided(t.data, t.dtype, shape, strides);
}

void bind_norm_rows(const ops::Call &c, ops::KernelArgs &args) {
  const int64_t h = c.dim("H");
  args.tensor("x_rows", norm_rows(c, "x", h));
  if (c.has("residual")) {
    args.tensor("residual_rows", norm_rows(c, "residual", h));
    args.tensor("residual_out_rows", norm_rows(c, "residual_out", h));
  }
  if (c.has("weight")) {
    const rt::TensorView &w = c.tensor("weight");
    const int64_t shape[2] = {1, h}, strides[2] = {h, 1};
    args.tensor("weight_row",
                rt::TensorView::strided(w.data, w.dtype, shape, strides));
  }
  if (c.has("rstd"))
    args.tensor("rstd_rows", norm_rows(c, "rstd", 1));
}

const ops::OpDef &norm_forward_op() {
  static const ops::OpDef op = ops::make_op<NormForwardSpec>(
      {.name = "norm_forward",
       .summary = "RMSNorm of the rows of x (+ residual): (h * rstd) * "
                  "(weight * out_scale), rstd = rsqrt(mean(h^2) + eps)",
       .tensors = {ops::input("x", {DType::bf16, DType::f32}, "*, H",
                              Layout::contiguous),
                   ops::optional(ops::input_like("weight", "x", "H",
                                                 Layout::contiguous,
                                                 "None: a unit weight"),
                                 true),
                   ops::optional(ops::input_like("residual", "x", "*, H",
                                                 Layout::contiguous,
                                                 "added to x first"),
                                 false),
                   ops::output_like("out", "x", "*, H"),
                   ops::optional(ops::output_like("residual_out", "x", "*, H",
                                                  Layout::contiguous,
                                                  "x + residual in x's dtype"),
                                 false),
                   ops::optional(ops::output("rstd", {DType::f32}, "*",
                                             Layout::contiguous, "with_rstd"),
                                 false)},
       .params = {ops::real("eps", 1e-6, 0.0, "inside the rsqrt"),
                  ops::real("out_scale", 1.0, "scales the output")},
       .dim_rules = {{.dim = "H", .min = 16, .max = 8192, .multiple = 16}},
       .cli_shape = "*, H",
       .default_shape = {8192, 7168},
       .check = check_norm_residual,
       .reference =
           [](const ops::HostCall &c) {
             NormForwardResult r = norm_forward_ref(
                 c.tensor("x"), c.given("weight"),
                 static_cast<float>(c.real("eps")), c.given("residual"),
                 static_cast<float>(c.real("out_scale")));
             return std::vector{r.out,
                                c.has("residual") ? r.norm_input : HostTensor{},
                                c.has("rstd") ? r.rstd : HostTensor{}};
           }},
      {[](const ops::Call &c) {
         NormForwardSpec s = norm_forward_spec(c);
         s.vector_bytes = ops::vector_bytes(
             c, {"x", "weight", "residual", "out", "residual_out"});
         return s;
       },
       norm_forward_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(norm_forward_op);

} // namespace tilejit::quant
