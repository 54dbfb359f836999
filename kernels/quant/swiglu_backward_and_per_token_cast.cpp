// swiglu_backward_and_per_token_cast.cpp - swiglu_backward_and_per_token_cast
// declared: the SwiGLU backward of a per-token e4m3 x (E, 2H), its (1, bk)
// e4m3 re-quantized gradient and the routing weights' gradient.
#include "quant/swiglu_backward_and_per_token_cast.h"

#include "common/check.h"
#include "op/op.h"
#include "quant/swiglu_halves.h"

#include <algorithm>
#include <vector>

namespace tilejit::quant {

static void check(const ops::Call &c) {
  const std::string &op = c.op().name;
  const int64_t w = c.dim("W"), bk = c.integer("num_per_channels");
  if (bk != 32 && bk != 128)
    throw UserError(fmt::format("{}: argument 'num_per_channels' is {}; "
                                "requires 32 or 128",
                                op, bk));
  if (w % (2 * bk) != 0)
    throw UserError(fmt::format("{}: argument 'x' has 2H = {} columns; "
                                "requires H % num_per_channels == 0 "
                                "(num_per_channels = {})",
                                op, w, bk));
}

/// A row in chunks of threads x vector columns: 64 x 8 where H % 512 ==
/// 0 (TileKernels' hidden sizes), else the largest power of two that
/// divides H, over at least 32 threads (a chunk holds whole groups: bk is a
/// power of two that divides H, so it divides that power of two too).
static SwigluBackwardCastSpec spec(const ops::Call &c) {
  const int64_t h = c.dim("W") / 2;
  const int64_t chunk = std::min<int64_t>(512, h & -h);
  SwigluBackwardCastSpec s;
  s.group = static_cast<int32_t>(c.integer("num_per_channels"));
  s.threads = static_cast<int32_t>(std::max<int64_t>(32, chunk / 8));
  s.vector = static_cast<int32_t>(chunk / s.threads);
  s.round_sf = c.flag("round_sf");
  s.clamp = c.real("swiglu_clamp_value") > 0;
  s.aligned = ops::vector_bytes(
                  c, {"x", "grad_out", "out", "x_grad_fp8", "x_grad"}) != 0;
  return s;
}

/// The kernel's views: x's halves (E, H); x_sf with each scale repeated
/// for the threads of its group; weight.flat as (T K, threads, 1) (a row's
/// weight, one a thread, gathered by pos_to_token_topk); weight_grad as
/// (T K, 1) rows for the scatter and, like token_topk_to_pos, as (1, T K)
/// for the zeroing; `blocks`, a size only: max(E, blocks of threads
/// entries over T K).
static void views(const ops::Call &c, const SwigluBackwardCastSpec &s,
                  ops::KernelArgs &args) {
  const rt::TensorView &x = c.tensor("x");
  const int64_t e = c.dim("E"), tk = c.dim("T") * c.dim("K");
  bind_swiglu_halves(x, args);
  args.tensor("x_sf_rep",
              ops::repeated(c.tensor("x_sf"), 2, s.group / s.vector));
  args.tensor("weight_src",
              ops::view_as(c.tensor("weight"), {tk, s.threads, 1}, {1, 0, 0}));
  args.tensor("to_pos_flat",
              ops::view_as(c.tensor("token_topk_to_pos"), {1, tk}, {tk, 1}));
  const rt::TensorView &wg = c.tensor("weight_grad");
  args.tensor("weight_grad_rows", ops::view_as(wg, {tk, 1}, {1, 1}));
  args.tensor("weight_grad_flat", ops::view_as(wg, {1, tk}, {tk, 1}));
  const int64_t blocks = std::max(e, (tk + s.threads - 1) / s.threads);
  args.tensor("blocks", rt::TensorView::strided(wg.data, DType::u8,
                                                std::vector<int64_t>{blocks},
                                                std::vector<int64_t>{1}));
}

static std::vector<ref::HostTensor> reference(const ops::HostCall &c) {
  std::optional<float> clamp;
  if (c.real("swiglu_clamp_value") > 0)
    clamp = static_cast<float>(c.real("swiglu_clamp_value"));
  SwigluBackwardResult r = swiglu_backward_and_per_token_cast_ref(
      {c.tensor("x"), c.tensor("x_sf")}, c.tensor("grad_out"),
      c.tensor("weight"), c.tensor("pos_to_token_topk"),
      c.tensor("token_topk_to_pos"), c.integer("num_per_channels"),
      c.flag("round_sf"), clamp);
  return {r.out, r.x_grad_fp8.data, r.x_grad_fp8.sf, r.x_grad, r.weight_grad};
}

const ops::OpDef &swiglu_backward_and_per_token_cast_op() {
  static const ops::OpDef op = ops::make_op<SwigluBackwardCastSpec>(
      {.name = "swiglu_backward_and_per_token_cast",
       .summary = "SwiGLU's backward of a per-token e4m3 x (E, 2H) = (gate | "
                  "up): out, the gradient in bf16 and cast per token to "
                  "e4m3, and the routing weights' gradient",
       .tensors =
           {ops::input("x", {DType::e4m3}, "E, W", ops::Layout::contiguous,
                       "(gate | up), W = 2H"),
            ops::input("x_sf", {DType::f32}, "", ops::Layout::contiguous,
                       "f32 (E, 2H / num_per_channels): x's scales"),
            ops::input("grad_out", {DType::bf16}, "", ops::Layout::contiguous,
                       "bf16 (E, H): the gradient of out"),
            ops::input("weight", {DType::f32}, "T, K", ops::Layout::contiguous,
                       "the routing weights"),
            ops::input("pos_to_token_topk", {DType::i32}, "E",
                       ops::Layout::contiguous,
                       "each row's index into weight (flat), -1: padding"),
            ops::input("token_topk_to_pos", {DType::i32}, "T, K",
                       ops::Layout::contiguous,
                       "each weight's row, -1: none (its gradient is 0)"),
            ops::output("out", {DType::bf16}, "", ops::Layout::contiguous,
                        "bf16 (E, H): act * w"),
            ops::output("x_grad_fp8", {DType::e4m3}, "",
                        ops::Layout::contiguous, "e4m3 (E, 2H)"),
            ops::output("x_grad_sf", {DType::f32}, "", ops::Layout::contiguous,
                        "f32 (E, 2H / num_per_channels), row-major"),
            ops::output("x_grad", {DType::bf16}, "", ops::Layout::contiguous,
                        "bf16 (E, 2H)"),
            ops::output("weight_grad", {DType::f32}, "",
                        ops::Layout::contiguous,
                        "f32 (T, K): each row's sum of grad_out * act")},
       .params = {ops::integer("num_per_channels", 128, 1, 1 << 30,
                               "channels a group: 32 or 128"),
                  ops::flag("round_sf", false,
                            "scales rounded up to powers of two"),
                  ops::real("swiglu_clamp_value", 0.0, 0.0,
                            "the clamp C of gate (above) and up (both "
                            "sides); 0: None")},
       .dim_rules = {{.dim = "W", .min = 64, .multiple = 64}},
       .cli_shape = "E, W, T, K",
       // TileKernels' benchmark (top 8 of 32 experts, 8 ranks of 4001
       // tokens, H = 2048, groups of 128): rows for its 886 MB.
       .default_shape = {35546, 4096, 32008, 8},
       .check = check,
       .shape_of =
           [](std::string_view tensor, const ops::ShapeArgs &a) {
             const int64_t e = a.dim("E"), w = a.dim("W"),
                           bk = a.integer("num_per_channels");
             if (tensor == "out" || tensor == "grad_out")
               return ops::TensorShape{DType::bf16, {e, w / 2}, {w / 2, 1}};
             if (tensor == "x_grad_fp8")
               return ops::TensorShape{DType::e4m3, {e, w}, {w, 1}};
             if (tensor == "x_grad_sf" || tensor == "x_sf")
               return ops::TensorShape{DType::f32, {e, w / bk}, {w / bk, 1}};
             if (tensor == "x_grad")
               return ops::TensorShape{DType::bf16, {e, w}, {w, 1}};
             const int64_t t = a.dim("T"), k = a.dim("K");
             return ops::TensorShape{DType::f32, {t, k}, {k, 1}};
           },
       .reference = reference},
      {spec, swiglu_backward_and_per_token_cast_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(swiglu_backward_and_per_token_cast_op);

void swiglu_backward_and_per_token_cast(
    const rt::TensorView &x, const rt::TensorView &x_sf,
    const rt::TensorView &grad_out, const rt::TensorView &weight,
    const rt::TensorView &pos_to_token_topk,
    const rt::TensorView &token_topk_to_pos, const rt::TensorView &out,
    const rt::TensorView &x_grad_fp8, const rt::TensorView &x_grad_sf,
    const rt::TensorView &x_grad, const rt::TensorView &weight_grad,
    int64_t num_per_channels, bool round_sf,
    std::optional<float> swiglu_clamp_value, CUstream stream) {
  if (swiglu_clamp_value && !(*swiglu_clamp_value > 0))
    throw UserError(fmt::format("swiglu_backward_and_per_token_cast: argument "
                                "'swiglu_clamp_value' is {}; requires a "
                                "positive value or None",
                                *swiglu_clamp_value));
  swiglu_backward_and_per_token_cast_op().call(
      {x, x_sf, grad_out, weight, pos_to_token_topk, token_topk_to_pos, out,
       x_grad_fp8, x_grad_sf, x_grad, weight_grad},
      {num_per_channels, round_sf, swiglu_clamp_value.value_or(0.0f)}, stream);
}

} // namespace tilejit::quant
