// swiglu_forward.cpp - swiglu_forward (TileKernels 2.1) declared: x (T, 2H)
// = (gate | value) to SwiGLU's activation in bf16 or f32 on the psum row
// layout, with routing weights, a clamp and its counters.
#include "quant/swiglu_forward.h"
#include "quant/reference.h"

#include "common/check.h"
#include "op/op.h"
#include "quant/psum_args.h"
#include "quant/swiglu_halves.h"

#include <algorithm>
#include <bit>
#include <numeric>

namespace tilejit::quant {

/// psum_valid tests (rows, experts) pairs in registers: 2 rows x 512
/// experts over 128 threads, 8 a thread.
static constexpr int64_t kMaxExperts = 512;

static void check(const ops::Call &c) {
  check_psum_args(c, kMaxExperts, /*has_counts=*/true);
}

/// Two rows a block in chunks of 512 columns over 128 threads (8 a
/// thread) where H % 512 == 0; else chunks of the largest power of two
/// that divides H, over fewer threads (at least 32).
static SwigluForwardSpec spec(const ops::Call &c) {
  const int64_t h = c.dim("W") / 2;
  const int64_t cw = std::min<int64_t>(512, h & -h);
  SwigluForwardSpec s;
  s.in_dtype = c.tensor("x").dtype;
  s.out_dtype = c.tensor("out").dtype;
  s.threads = static_cast<int32_t>(std::max<int64_t>(32, s.block_m * cw / 8));
  s.vector = static_cast<int32_t>(s.block_m * cw / s.threads);
  s.psum = c.has("psum_num_tokens_per_expert");
  if (s.psum) {
    // psum_valid's pairs: a thread's vector each (two rows a tile).
    s.experts = psum_experts(c, std::max<int64_t>(s.threads, cw));
  }
  s.alignment = static_cast<int32_t>(c.integer("token_alignment"));
  s.weights = c.has("topk_weights");
  s.clamp = c.real("clamp_value") > 0;
  s.count = c.has("clamped_count");
  s.pack = s.block_m * h < (1 << 16);
  s.vector_bytes = ops::vector_bytes(c, {"x", "out"});
  return s;
}

/// The kernel's views: x's halves (T, H); psum as (1, E); topk_weights as
/// (T, copies), stride 0 (each row's weight one a thread); clamped_count
/// as (4, 1); routed_scaling_factor 1 when None.
static void views(const ops::Call &c, const SwigluForwardSpec &s,
                  ops::KernelArgs &args) {
  bind_swiglu_halves(c.tensor("x"), args);
  if (s.psum)
    bind_psum(c, args);
  if (s.weights)
    bind_row_weights(c, args, s.threads / std::gcd(s.block_m, s.threads));
  if (s.count)
    args.tensor("counts",
                ops::view_as(c.tensor("clamped_count"), {4, 1}, {1, 1}));
}

static std::vector<ref::HostTensor> reference(const ops::HostCall &c) {
  std::optional<ref::HostTensor> count;
  if (c.has("clamped_count"))
    count = ref::HostTensor::zeros(DType::i64, {4});
  const auto [rsf, clamp] = psum_scalars(c);
  ref::HostTensor out = swiglu_forward_ref(
      c.tensor("x"), c.choice("fmt"), c.given("psum_num_tokens_per_expert"),
      c.given("topk_weights"), rsf, clamp, count, c.integer("token_alignment"));
  return {out, count ? *count : ref::HostTensor{}};
}

const ops::OpDef &swiglu_forward_op() {
  static const ops::OpDef op = ops::make_op<SwigluForwardSpec>(
      {.name = "swiglu_forward",
       .summary = "SwiGLU of x (T, 2H) = (gate | value) in bf16 or f32 on "
                  "TileKernels 2.1's psum row layout, weighted, clamped and "
                  "counted",
       .tensors =
           {ops::input("x", {DType::bf16, DType::f32}, "T, W",
                       ops::Layout::contiguous, "(gate | value), W = 2H"),
            psum_input(/*padding=*/false), row_weights_input(),
            ops::output("out", {DType::bf16, DType::f32}, "",
                        ops::Layout::contiguous, "(T, H) in fmt"),
            ops::absent_by_default(ops::optional_output(
                "clamped_count", {DType::i64}, "4", ops::Layout::contiguous,
                "added to: #(l > c), #(r > c), #(r < -c), valid rows x H "
                "(requires clamp_value)"))},
       .params = with_psum_params(
           {ops::choice("fmt", "bf16", {"bf16", "fp32"}, "the output's dtype")},
           "gate", "value"),
       .dim_rules = {{.dim = "W", .min = 128, .multiple = 128}},
       .cli_shape = "T, W, E",
       .default_shape = {32768, 4096, 32},
       .check = check,
       .shape_of =
           [](std::string_view, const ops::ShapeArgs &a) {
             const int64_t t = a.dim("T"), h = a.dim("W") / 2;
             return ops::TensorShape{a.choice("fmt") == "bf16" ? DType::bf16
                                                               : DType::f32,
                                     {t, h},
                                     {h, 1}};
           },
       .reference = reference},
      {spec, swiglu_forward_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(swiglu_forward_op);

void swiglu_forward(const rt::TensorView &x,
                    const rt::TensorView &psum_num_tokens_per_expert,
                    const rt::TensorView &topk_weights,
                    const rt::TensorView &out,
                    const rt::TensorView &clamped_count,
                    std::optional<float> routed_scaling_factor,
                    std::optional<float> clamp_value, int64_t token_alignment,
                    CUstream stream) {
  check_psum_scalars("swiglu_forward", routed_scaling_factor, clamp_value);
  const std::string fmt = out.dtype == DType::f32 ? "fp32" : "bf16";
  swiglu_forward_op().call(
      {x, psum_num_tokens_per_expert, topk_weights, out, clamped_count},
      {fmt, routed_scaling_factor.value_or(0.0f), clamp_value.value_or(0.0f),
       token_alignment},
      stream);
}

} // namespace tilejit::quant
