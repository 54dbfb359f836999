// swiglu_backward_and_per_token_cast_21.cpp - TileKernels 2.1's FP8
// swiglu_backward_and_per_token_cast declared, on swiglu_backward's kernel
// and tiling: an e4m3 x dequantized with its scales, the gradient also
// cast per token to e4m3.
#include "quant/swiglu_backward_and_per_token_cast_21.h"
#include "quant/swiglu_backward.h"

#include "common/check.h"
#include "op/op.h"
#include "quant/psum_args.h"
#include "quant/scale_layout.h"
#include "quant/swiglu_halves.h"

namespace tilejit::quant {

static void check_group(const ops::Call &c, const char *name) {
  const int64_t g = c.integer(name), h = c.dim("W") / 2;
  if (g != 32 && g != 128)
    throw UserError(fmt::format("{}: argument '{}' is {}; requires 32 or 128",
                                c.op().name, name, g));
  if (h % g != 0)
    throw UserError(fmt::format("{}: argument '{}' is {}; requires it to "
                                "divide H = {}",
                                c.op().name, name, g, h));
}

static void check(const ops::Call &c) {
  check_group(c, "x_sf_group");
  check_group(c, "num_per_channels");
  check_sf_flags(c);
  check_swiglu_backward_args(c);
}

static SwigluBackwardSpec spec(const ops::Call &c) {
  SwigluBackwardSpec s = swiglu_backward_spec(c);
  s.x_group = static_cast<int32_t>(c.integer("x_sf_group"));
  s.cast_group = static_cast<int32_t>(c.integer("num_per_channels"));
  s.round_sf = c.flag("round_sf");
  s.sf_layout = sf_layout_of(c);
  if (ops::vector_bytes(c, {"x_grad_fp8"}) == 0)
    s.vector_bytes = 0;
  return s;
}

/// swiglu_backward's views; x_sf with each scale repeated for the threads
/// that hold its group; x_grad_fp8's halves; packed scales as bytes.
static void views(const ops::Call &c, const SwigluBackwardSpec &s,
                  ops::KernelArgs &args) {
  swiglu_backward_views(c, s, args);
  args.tensor("x_sf_rep",
              ops::repeated(c.tensor("x_sf"), 2, s.x_group / s.vector));
  bind_swiglu_halves(c.tensor("x_grad_fp8"), args, "x_grad_fp8_l",
                     "x_grad_fp8_r");
  if (s.sf_layout == SfLayout::packed_ue8m0)
    args.tensor("x_grad_sf", ops::as_bytes(c.tensor("x_grad_sf")));
}

static std::vector<ref::HostTensor> reference(const ops::HostCall &c) {
  const auto [rsf, clamp] = psum_scalars(c);
  SwigluBackwardCast21Result r = swiglu_backward_and_per_token_cast_21_ref(
      {c.tensor("x"), c.tensor("x_sf")}, c.tensor("act_x_grad"),
      c.integer("num_per_channels"), c.given("psum_num_tokens_per_expert"),
      c.given("topk_weights"), rsf, clamp, c.has("act_out"),
      c.integer("token_alignment"), c.flag("use_tma_aligned_col_major_sf"),
      c.flag("round_sf"), c.flag("use_packed_ue8m0"));
  return {r.x_grad, r.x_grad_fp8.data, r.x_grad_fp8.sf, r.weight_grad,
          r.act_out};
}

const ops::OpDef &swiglu_backward_and_per_token_cast_21_op() {
  static const ops::OpDef op = ops::make_op<SwigluBackwardSpec>(
      {.name = "swiglu_backward_and_per_token_cast_21",
       .summary = "TileKernels 2.1's swiglu_backward_and_per_token_cast: "
                  "SwiGLU's gradient over an e4m3 x (T, 2H) on the psum row "
                  "layout, in bf16 and cast per token to e4m3, with the "
                  "routing weights' gradient and the recomputed activation",
       .tensors =
           {ops::input("x", {DType::e4m3}, "T, W", ops::Layout::contiguous,
                       "(l | r), W = 2H"),
            ops::input("x_sf", {DType::f32}, "", ops::Layout::contiguous,
                       "f32 (T, 2H / x_sf_group): x's scales"),
            ops::input(
                "act_x_grad",
                {DType::bf16, DType::f32}, "", ops::Layout::contiguous,
                "(T, H): the gradient of the activation"),
            psum_input(/*padding=*/true), row_weights_input(),
            ops::output("x_grad", {DType::bf16}, "", ops::Layout::contiguous,
                        "bf16 (T, 2H)"),
            ops::output("x_grad_fp8", {DType::e4m3}, "",
                        ops::Layout::contiguous,
                        "e4m3 (T, 2H): the f32 gradient cast per token"),
            ops::output("x_grad_sf", {DType::f32, DType::i32}, "",
                        ops::Layout::as_shaped,
                        "scales; layout by the flags (§3.3), 0 on padding "
                        "rows"),
            ops::absent_by_default(ops::optional_output(
                "weight_grad", {DType::f32}, "", ops::Layout::contiguous,
                "(T,): rsf x each row's sum of g * act (with topk_weights)")),
            ops::absent_by_default(ops::optional_output(
                "act_out", {DType::bf16}, "", ops::Layout::contiguous,
                "bf16 (T, H): act * w (do_recompute)"))},
       .params = with_sf_flags(with_psum_params(
           {ops::choice("fmt", "e4m3", {"e4m3"}, "the cast's format"),
            ops::integer("num_per_channels", 128, 1, 1 << 30,
                         "channels a group of the cast: 32 or 128"),
            ops::integer("x_sf_group", 128, 1, 1 << 30,
                         "channels a scale of x_sf: 32 or 128 (the host "
                         "entry takes it from x_sf's shape)")},
           "l", "r")),
       .dim_rules = {{.dim = "W", .min = 128, .multiple = 128}},
       .cli_shape = "T, W, E",
       .default_shape = {32768, 4096, 32},
       .check = check,
       .shape_of =
           [](std::string_view tensor, const ops::ShapeArgs &a) {
             const int64_t t = a.dim("T"), w = a.dim("W");
             if (tensor == "x_sf") {
               const int64_t n = w / a.integer("x_sf_group");
               return ops::TensorShape{DType::f32, {t, n}, {n, 1}};
             }
             if (tensor == "act_x_grad")
               return ops::TensorShape{
                   a.dtype("act_x_grad"), {t, w / 2}, {w / 2, 1}};
             if (tensor == "x_grad")
               return ops::TensorShape{DType::bf16, {t, w}, {w, 1}};
             if (tensor == "x_grad_fp8")
               return ops::TensorShape{DType::e4m3, {t, w}, {w, 1}};
             if (tensor == "x_grad_sf")
               return sf_shape(t, w / a.integer("num_per_channels"),
                               sf_layout_of(a));
             if (tensor == "weight_grad")
               return ops::TensorShape{DType::f32, {t}, {1}};
             return ops::TensorShape{DType::bf16, {t, w / 2}, {w / 2, 1}};
           },
       .reference = reference},
      {spec, swiglu_backward_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(swiglu_backward_and_per_token_cast_21_op);

void swiglu_backward_and_per_token_cast_21(
    const rt::TensorView &x, const rt::TensorView &x_sf,
    const rt::TensorView &act_x_grad, int64_t num_per_channels,
    const rt::TensorView &psum_num_tokens_per_expert,
    const rt::TensorView &topk_weights, const rt::TensorView &x_grad,
    const rt::TensorView &x_grad_fp8, const rt::TensorView &x_grad_sf,
    const rt::TensorView &weight_grad, const rt::TensorView &act_out,
    std::optional<float> routed_scaling_factor,
    bool use_tma_aligned_col_major_sf, bool round_sf, bool use_packed_ue8m0,
    std::optional<float> clamp_value, int64_t token_alignment,
    CUstream stream) {
  constexpr const char *op = "swiglu_backward_and_per_token_cast_21";
  check_psum_scalars(op, routed_scaling_factor, clamp_value);
  // x_sf's group from its shape: (T, 2H / bk).
  int64_t x_sf_group = 0;
  if (x.shape.size() == 2 && x_sf.shape.size() == 2 && x_sf.shape[1] > 0 &&
      x.shape[1] % x_sf.shape[1] == 0)
    x_sf_group = x.shape[1] / x_sf.shape[1];
  if (x_sf_group != 32 && x_sf_group != 128)
    throw UserError(fmt::format(
        "{}: argument 'x_sf' is {}; requires (T, 2H / bk) for x {}, bk 32 or "
        "128",
        op, x_sf.to_string(), x.to_string()));
  swiglu_backward_and_per_token_cast_21_op().call(
      {x, x_sf, act_x_grad, psum_num_tokens_per_expert, topk_weights, x_grad,
       x_grad_fp8, x_grad_sf, weight_grad, act_out},
      {std::string("e4m3"), num_per_channels, x_sf_group,
       routed_scaling_factor.value_or(0.0f), clamp_value.value_or(0.0f),
       token_alignment, use_tma_aligned_col_major_sf, round_sf,
       use_packed_ue8m0},
      stream);
}

} // namespace tilejit::quant
