// swiglu_backward.cpp - swiglu_backward (TileKernels 2.1) declared: the
// gradient of SwiGLU over x (T, 2H) = (l | r) in bf16 or f32 on the psum
// row layout, with the routing weights' gradient and the recomputed
// activation.
#include "quant/swiglu_backward.h"
#include "quant/reference.h"

#include "common/check.h"
#include "op/op.h"
#include "quant/psum_args.h"
#include "quant/swiglu_halves.h"

#include <algorithm>
#include <bit>

namespace tilejit::quant {

/// psum_padding tests (row, expert) pairs in registers: 512 experts over
/// 64 threads at most.
static constexpr int64_t kMaxExperts = 512;

void check_swiglu_backward_args(const ops::Call &c) {
  const std::string &op = c.op().name;
  check_psum_args(c, kMaxExperts, /*has_counts=*/false);
  if (c.has("topk_weights") != c.has("weight_grad"))
    throw UserError(fmt::format(
        "{}: argument '{}' is given while '{}' is None; requires both or "
        "neither",
        op, c.has("topk_weights") ? "topk_weights" : "weight_grad",
        c.has("topk_weights") ? "weight_grad" : "topk_weights"));
}

/// A row in chunks of threads x vector columns: 64 x 8 where H % 512 == 0
/// (TileKernels' tiling), else the largest power of two that divides H
/// over at least 32 threads. Measured at 32768 x 4096 on the H200 (clamp
/// off / 0.5, % of copy): 97.2 / 84.9; 128 threads x 4: 89.8 / 84.3; at
/// least 12 blocks an SM (80 registers, spills): 93.2 / 87.5; 16: 75.6 /
/// 57.3.
SwigluBackwardSpec swiglu_backward_spec(const ops::Call &c) {
  const int64_t h = c.dim("W") / 2;
  const int64_t chunk = std::min<int64_t>(512, h & -h);
  SwigluBackwardSpec s;
  s.in_dtype = c.tensor("x").dtype;
  s.grad_dtype = c.tensor("act_x_grad").dtype;
  s.out_dtype = c.tensor("x_grad").dtype;
  s.threads = static_cast<int32_t>(std::max<int64_t>(32, chunk / 8));
  s.vector = static_cast<int32_t>(chunk / s.threads);
  s.psum = c.has("psum_num_tokens_per_expert");
  if (s.psum) {
    // psum_padding's pairs: one a thread (a one-row tile: psum_dsl.h).
    s.experts = psum_experts(c, s.threads);
  }
  s.alignment = static_cast<int32_t>(c.integer("token_alignment"));
  s.weights = c.has("topk_weights");
  s.clamp = c.real("clamp_value") > 0;
  s.recompute = c.has("act_out");
  s.vector_bytes =
      ops::vector_bytes(c, {"x", "act_x_grad", "x_grad", "act_out"});
  return s;
}

/// The kernel's views: x's and x_grad's halves (T, H); psum as (1, E);
/// topk_weights as (T, threads), stride 0 (each row's weight one a
/// thread); weight_grad as (T, 1); routed_scaling_factor 1 when None.
void swiglu_backward_views(const ops::Call &c, const SwigluBackwardSpec &s,
                           ops::KernelArgs &args) {
  bind_swiglu_halves(c.tensor("x"), args);
  bind_swiglu_halves(c.tensor("x_grad"), args, "x_grad_l", "x_grad_r");
  if (s.psum)
    bind_psum(c, args);
  if (s.weights) {
    bind_row_weights(c, args, s.threads);
    args.tensor("weight_grad_rows",
                ops::view_as(c.tensor("weight_grad"), {c.dim("T"), 1}, {1, 1}));
  }
}

static std::vector<ref::HostTensor> reference(const ops::HostCall &c) {
  const auto [rsf, clamp] = psum_scalars(c);
  SwigluBackward21Result r = swiglu_backward_ref(
      c.tensor("x"), c.tensor("act_x_grad"), c.choice("fmt"),
      c.given("psum_num_tokens_per_expert"), c.given("topk_weights"), rsf,
      clamp, c.has("act_out"), c.integer("token_alignment"));
  return {r.x_grad, r.weight_grad, r.act_out};
}

const ops::OpDef &swiglu_backward_op() {
  static const ops::OpDef op = ops::make_op<SwigluBackwardSpec>(
      {.name = "swiglu_backward",
       .summary = "SwiGLU's gradient over x (T, 2H) = (l | r) in bf16 or f32 "
                  "on TileKernels 2.1's psum row layout, with the routing "
                  "weights' gradient and the recomputed activation",
       .tensors =
           {ops::input("x", {DType::bf16, DType::f32}, "T, W",
                       ops::Layout::contiguous, "(l | r), W = 2H"),
            ops::input(
                "act_x_grad",
                {DType::bf16, DType::f32}, "", ops::Layout::contiguous,
                "(T, H) of x's dtype: the gradient of the activation"),
            psum_input(/*padding=*/true), row_weights_input(),
            ops::output("x_grad", {DType::bf16, DType::f32}, "",
                        ops::Layout::contiguous, "(T, 2H) in fmt"),
            ops::absent_by_default(ops::optional_output(
                "weight_grad", {DType::f32}, "", ops::Layout::contiguous,
                "(T,): rsf x each row's sum of g * act (with topk_weights)")),
            ops::absent_by_default(
                ops::optional_output("act_out", {DType::bf16, DType::f32}, "",
                                     ops::Layout::contiguous,
                                     "(T, H) in fmt: act * w (do_recompute)"))},
       .params =
           with_psum_params({ops::choice("fmt", "bf16", {"bf16", "fp32"},
                                         "the dtype of x_grad and act_out")},
                            "l", "r"),
       .dim_rules = {{.dim = "W", .min = 128, .multiple = 128}},
       .cli_shape = "T, W, E",
       .default_shape = {32768, 4096, 32},
       .check = check_swiglu_backward_args,
       .shape_of =
           [](std::string_view tensor, const ops::ShapeArgs &a) {
             const int64_t t = a.dim("T"), w = a.dim("W");
             const DType out =
                 a.choice("fmt") == "bf16" ? DType::bf16 : DType::f32;
             if (tensor == "act_x_grad")
               return ops::TensorShape{a.dtype("x"), {t, w / 2}, {w / 2, 1}};
             if (tensor == "x_grad")
               return ops::TensorShape{out, {t, w}, {w, 1}};
             if (tensor == "weight_grad")
               return ops::TensorShape{DType::f32, {t}, {1}};
             return ops::TensorShape{out, {t, w / 2}, {w / 2, 1}};
           },
       .reference = reference},
      {swiglu_backward_spec, swiglu_backward_kernel, swiglu_backward_views});
  return op;
}
TILEJIT_REGISTER_OP(swiglu_backward_op);

void swiglu_backward(const rt::TensorView &x, const rt::TensorView &act_x_grad,
                     const rt::TensorView &psum_num_tokens_per_expert,
                     const rt::TensorView &topk_weights,
                     const rt::TensorView &x_grad,
                     const rt::TensorView &weight_grad,
                     const rt::TensorView &act_out,
                     std::optional<float> routed_scaling_factor,
                     std::optional<float> clamp_value, int64_t token_alignment,
                     CUstream stream) {
  check_psum_scalars("swiglu_backward", routed_scaling_factor, clamp_value);
  const std::string fmt = x_grad.dtype == DType::f32 ? "fp32" : "bf16";
  swiglu_backward_op().call({x, act_x_grad, psum_num_tokens_per_expert,
                             topk_weights, x_grad, weight_grad, act_out},
                            {fmt, routed_scaling_factor.value_or(0.0f),
                             clamp_value.value_or(0.0f), token_alignment},
                            stream);
}

} // namespace tilejit::quant
