// swiglu_forward_and_per_token_cast_21.cpp - TileKernels 2.1's form of
// swiglu_forward_and_per_token_cast declared: the psum row layout, a weight
// a row and four counts, on the 1.0 form's kernel and tiling.
#include "quant/swiglu_forward_and_per_token_cast_21.h"
#include "quant/swiglu_forward_and_per_token_cast.h"

#include "common/check.h"
#include "op/op.h"
#include "quant/psum_args.h"
#include "quant/swiglu_halves.h"

#include <algorithm>
#include <bit>
#include <numeric>

namespace tilejit::quant {

/// psum_valid tests (row, expert) pairs in registers: 1024 experts over
/// 128 threads at most, 8 a thread.
static constexpr int64_t kMaxExperts = 1024;

static void check(const ops::Call &c) {
  const std::string &op = c.op().name;
  const int64_t g = c.integer("num_per_channels");
  if (g != 32 && g != 128)
    throw UserError(fmt::format("{}: argument 'num_per_channels' is {}; "
                                "requires 32 or 128",
                                op, g));
  check_sf_flags(c);
  check_psum_args(c, kMaxExperts, /*has_counts=*/true);
}

/// The 1.0 form's tiling; its per-row values as (T, copies) views.
static SwigluForwardCastSpec spec(const ops::Call &c) {
  const int64_t h = c.dim("W") / 2;
  const PerTokenCastSpec t = swiglu_tiling(c.tensor("x").dtype, c.dim("T"), h,
                                           c.integer("num_per_channels"));
  SwigluForwardCastSpec s;
  s.in_dtype = t.in_dtype;
  s.group = t.group;
  s.block_m = t.block_m;
  s.block_k = t.block_k;
  s.threads = t.threads;
  s.inside = t.inside;
  s.round_sf = c.flag("round_sf");
  s.sf_layout = sf_layout_of(c);
  s.vector_bytes = ops::vector_bytes(c, {"x", "out"});
  s.clamp = c.real("clamp_value") > 0;
  s.count = c.has("clamped_count");
  s.tk21 = 1;
  s.row_weights = c.has("topk_weights");
  s.psum = c.has("psum_num_tokens_per_expert");
  s.alignment = static_cast<int32_t>(c.integer("token_alignment"));
  if (s.psum) {
    // psum_valid's pairs: one a thread for a one-row tile, else a
    // thread's vector each (see psum_valid).
    s.experts = psum_experts(
        c, std::max<int64_t>(
               s.threads,
               s.block_m == 1 ? 0 : s.threads * s.row_vector() / s.block_m));
  }
  return s;
}

/// The kernel's views: x's halves; psum as (1, E); topk_weights as (T,
/// copies), stride 0 (a tile's rows x copies a multiple of the threads);
/// clamped_count as (4, 1); packed scales as bytes; routed_scaling_factor
/// 1 when None.
static void views(const ops::Call &c, const SwigluForwardCastSpec &s,
                  ops::KernelArgs &args) {
  bind_swiglu_halves(c.tensor("x"), args);
  if (s.psum)
    bind_psum(c, args);
  if (s.row_weights)
    bind_row_weights(c, args, s.threads / std::gcd(s.block_m, s.threads));
  if (s.count)
    args.tensor("counts",
                ops::view_as(c.tensor("clamped_count"), {4, 1}, {1, 1}));
  if (s.sf_layout == SfLayout::packed_ue8m0)
    args.tensor("out_sf", ops::as_bytes(c.tensor("out_sf")));
}

static std::vector<ref::HostTensor> reference(const ops::HostCall &c) {
  std::optional<ref::HostTensor> count;
  if (c.has("clamped_count"))
    count = ref::HostTensor::zeros(DType::i64, {4});
  const auto [rsf, clamp] = psum_scalars(c);
  QuantTensor q = swiglu_forward_and_per_token_cast_21_ref(
      c.tensor("x"), "e4m3", c.integer("num_per_channels"),
      c.given("psum_num_tokens_per_expert"), c.given("topk_weights"), rsf,
      c.flag("use_tma_aligned_col_major_sf"), c.flag("round_sf"),
      c.flag("use_packed_ue8m0"), clamp, count, c.integer("token_alignment"));
  return {q.data, q.sf, count ? *count : ref::HostTensor{}};
}

const ops::OpDef &swiglu_forward_and_per_token_cast_21_op() {
  static const ops::OpDef op =
      ops::make_op<SwigluForwardCastSpec>(
          {.name = "swiglu_forward_and_per_token_cast_21",
           .summary = "TileKernels 2.1's swiglu_forward_and_per_token_cast: "
                      "SwiGLU of x (T, 2H) on the psum row layout, weighted, "
                      "clamped and counted, cast per token to e4m3",
           .tensors =
               {ops::input("x", {DType::bf16, DType::f32}, "T, W",
                           ops::Layout::contiguous, "(gate | value), W = 2H"),
                psum_input(/*padding=*/false), row_weights_input(),
                ops::output("out", {DType::e4m3}, "", ops::Layout::contiguous,
                            "e4m3 (T, H); rows not valid: quantized zeros"),
                ops::output("out_sf", {DType::f32, DType::i32},
                            "", ops::Layout::as_shaped,
                            "scales; layout by the flags (§3.3)"),
                ops::absent_by_default(ops::optional_output(
                    "clamped_count", {DType::i64}, "4", ops::Layout::contiguous,
                    "added to: #(l > c), #(r > c), #(r < -c), valid rows x H "
                    "(requires clamp_value)"))},
           .params = with_sf_flags(with_psum_params(
               {ops::choice("fmt", "e4m3", {"e4m3"}, "the output format"),
                ops::integer("num_per_channels", 128, 1, 1 << 30,
                             "channels a group: 32 or 128")},
               "gate", "value")),
           .dim_rules = {{.dim = "W", .min = 256, .multiple = 256}},
           .cli_shape = "T, W, E",
           .default_shape = {32768, 4096, 32},
           .check = check,
           .shape_of =
               [](std::string_view tensor, const ops::ShapeArgs &a) {
                 const int64_t t = a.dim("T"), h = a.dim("W") / 2;
                 if (tensor == "out")
                   return ops::TensorShape{DType::e4m3, {t, h}, {h, 1}};
                 const int64_t g = a.integer("num_per_channels");
                 return sf_shape(t, h / g, sf_layout_of(a));
               },
           .reference = reference},
          {spec, swiglu_forward_and_per_token_cast_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(swiglu_forward_and_per_token_cast_21_op);

void swiglu_forward_and_per_token_cast_21(
    const rt::TensorView &x, int64_t num_per_channels,
    const rt::TensorView &psum_num_tokens_per_expert,
    const rt::TensorView &topk_weights, const rt::TensorView &out,
    const rt::TensorView &out_sf, const rt::TensorView &clamped_count,
    std::optional<float> routed_scaling_factor,
    bool use_tma_aligned_col_major_sf, bool round_sf, bool use_packed_ue8m0,
    std::optional<float> clamp_value, int64_t token_alignment,
    CUstream stream) {
  check_psum_scalars("swiglu_forward_and_per_token_cast_21",
                     routed_scaling_factor, clamp_value);
  swiglu_forward_and_per_token_cast_21_op().call(
      {x, psum_num_tokens_per_expert, topk_weights, out, out_sf, clamped_count},
      {std::string("e4m3"), num_per_channels,
       routed_scaling_factor.value_or(0.0f), clamp_value.value_or(0.0f),
       token_alignment, use_tma_aligned_col_major_sf, round_sf,
       use_packed_ue8m0},
      stream);
}

} // namespace tilejit::quant
