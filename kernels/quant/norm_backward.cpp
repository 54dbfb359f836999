// norm_backward.cpp - norm_backward declared (TileKernels 2.1's RMSNorm
// backward): out_grad and x (the forward's norm_input) bf16 or f32 (T, H),
// rstd f32 (T,), an optional weight (H,) and residual_out_grad (T, H), to
// x_grad (T, H) and, when asked, weight_grad_out (H,): the weight's
// gradient, plus the given weight_grad (TileKernels' buffer accumulated
// into: pass it as both).
#include "quant/norm_backward.h"
#include "quant/norm_chunk.h"
#include "quant/reference.h"

#include "op/op.h"

#include <algorithm>
#include <bit>
#include <utility>

namespace tilejit::quant {

namespace {

using ops::Layout;

void check(const ops::Call &c) {
  if (c.has("weight_grad_out") && !c.has("weight"))
    throw UserError("norm_backward: argument 'weight_grad_out' is asked for "
                    "without 'weight'; requires a weight");
  if (c.has("weight_grad") && !c.has("weight_grad_out"))
    throw UserError("norm_backward: argument 'weight_grad' is passed without "
                    "'weight_grad_out'; requires both (the sum is written "
                    "there: the same buffer to accumulate in place)");
  if (c.has("weight_grad") &&
      c.tensor("weight_grad").dtype != c.tensor("weight_grad_out").dtype)
    throw UserError(fmt::format(
        "norm_backward: argument 'weight_grad_out' has dtype {}; requires "
        "weight_grad's dtype {}",
        name_of(c.tensor("weight_grad_out").dtype),
        name_of(c.tensor("weight_grad").dtype)));
}

NormBackwardSpec spec(const ops::Call &c) {
  NormBackwardSpec s;
  s.dtype = c.tensor("x").dtype;
  s.hidden = static_cast<int32_t>(c.dim("H"));
  // 4 columns a thread (norm_chunk.h), so that a thread's weight-gradient
  // sums (H / threads) fit in registers.
  s.chunk = norm_chunk(s.hidden, 128);
  s.threads = s.chunk / 4;
  // Up to 256 blocks (about two an SM), a power of two so that few spec keys
  // cover every T.
  s.blocks = static_cast<int32_t>(std::min<uint64_t>(
      256, std::bit_ceil(static_cast<uint64_t>(
               std::max<int64_t>(c.tensor("x").shape[0], 1)))));
  s.weight = c.has("weight") ? 1 : 0;
  s.residual = c.has("residual_out_grad") ? 1 : 0;
  s.weight_grad = c.has("weight_grad") ? 1 : 0;
  s.weight_out = c.has("weight_grad_out") ? 1 : 0;
  if (s.weight_out)
    s.out_dtype = c.tensor("weight_grad_out").dtype;
  s.vector_bytes = ops::vector_bytes(
      c, {"out_grad", "x", "weight", "residual_out_grad", "x_grad"});
  return s;
}

/// No rows and the weight gradient accumulated in place: nothing to do (the
/// buffer is left as it is, bit for bit, as TileKernels leaves it).
bool nothing(const ops::Call &c, CUstream) {
  return c.dim("T") == 0 &&
         (!c.has("weight_grad_out") ||
          (c.has("weight_grad") &&
           c.tensor("weight_grad").data == c.tensor("weight_grad_out").data));
}

/// A (H,) tensor as (1, H).
rt::TensorView row(const rt::TensorView &t) {
  const int64_t shape[2] = {1, t.shape[0]}, strides[2] = {t.shape[0], 1};
  return rt::TensorView::strided(t.data, t.dtype, shape, strides);
}

void views(const ops::Call &c, const NormBackwardSpec &,
           ops::KernelArgs &args) {
  for (auto [name, view] : {std::pair{"weight", "weight_row"},
                            {"weight_grad", "weight_grad_row"},
                            {"weight_grad_out", "weight_grad_out_row"}})
    if (c.has(name))
      args.tensor(view, row(c.tensor(name)));
}

ops::TensorShape scratch(const ops::Call &, const NormBackwardSpec &s) {
  // The blocks' partial sums; none without a weight gradient to write.
  return {DType::f32,
          {s.weight_out ? s.blocks : 0, s.weight_out ? s.hidden : 0},
          {}};
}

} // namespace

const ops::OpDef &norm_backward_op() {
  static const ops::OpDef op = ops::make_op<NormBackwardSpec>(
      {.name = "norm_backward",
       .summary = "RMSNorm's backward: x_grad = (gw - xh * mean(xh * gw)) * "
                  "rstd (+ residual_out_grad), xh = x * rstd, gw = out_grad "
                  "* out_scale * weight; weight_grad_out = weight_grad + "
                  "sum over rows of xh * out_grad * out_scale",
       .tensors =
           {ops::input("out_grad", {DType::bf16, DType::f32}, "T, H",
                       Layout::inner_contiguous),
            ops::input_like("x", "out_grad", "T, H", Layout::inner_contiguous,
                            "the forward's norm_input"),
            ops::optional(ops::input_like("weight", "x", "H",
                                          Layout::contiguous,
                                          "None: a unit weight"),
                          true),
            ops::input("rstd", {DType::f32}, "T", Layout::contiguous,
                       "the forward's"),
            ops::optional(ops::input_like("residual_out_grad", "x", "T, H",
                                          Layout::inner_contiguous,
                                          "added to x_grad"),
                          false),
            ops::absent_by_default(ops::optional_input(
                "weight_grad", {DType::f32, DType::bf16}, "H",
                Layout::contiguous,
                "added to (TileKernels' buffer accumulated into)")),
            ops::output_like("x_grad", "x", "T, H", Layout::inner_contiguous),
            ops::optional_output(
                "weight_grad_out", {DType::f32, DType::bf16}, "H",
                Layout::contiguous,
                "weight_grad plus the weight's gradient (weight_grad "
                "itself, to accumulate in place)")},
       .params = {ops::real("out_scale", 1.0, "the forward's")},
       .dim_rules = {{.dim = "H", .min = 32, .max = 8192, .multiple = 32}},
       .cli_shape = "T, H",
       .default_shape = {8192, 7168},
       .check = check,
       .special = nothing,
       .reference =
           [](const ops::HostCall &c) {
             // The sum goes into a copy of weight_grad, else into zeros of
             // weight_grad_out's dtype.
             std::optional<HostTensor> acc;
             if (c.has("weight_grad"))
               acc = c.tensor("weight_grad").clone();
             else if (c.has("weight_grad_out"))
               acc = HostTensor::zeros(c.output("weight_grad_out").dtype,
                                       {c.tensor("x").size(1)});
             NormBackwardResult r = norm_backward_ref(
                 c.tensor("out_grad"), c.tensor("x"), c.given("weight"),
                 c.tensor("rstd"), c.given("residual_out_grad"),
                 static_cast<float>(c.real("out_scale")), acc);
             return std::vector{r.x_grad, acc ? r.weight_grad : HostTensor{}};
           }},
      {spec,
       norm_backward_kernel,
       views,
       {norm_backward_weight_kernel},
       scratch});
  return op;
}
TILEJIT_REGISTER_OP(norm_backward_op);

} // namespace tilejit::quant
