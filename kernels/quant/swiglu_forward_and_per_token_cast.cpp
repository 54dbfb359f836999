// swiglu_forward_and_per_token_cast.cpp - swiglu_forward_and_per_token_cast
// declared: x (E, 2H) = (gate | up) to SwiGLU's f32 activation, weighted and
// masked per row, cast per token to e4m3 with per_token_cast's tiling.
#include "quant/swiglu_forward_and_per_token_cast.h"

#include "op/op.h"
#include "quant/swiglu_halves.h"

#include <bit>
#include <numeric>

namespace tilejit::quant {

PerTokenCastSpec SwigluForwardCastSpec::cast() const {
  PerTokenCastSpec s;
  s.in_dtype = in_dtype;
  s.group = group;
  s.block_m = block_m;
  s.block_k = block_k;
  s.threads = threads;
  s.round_sf = round_sf;
  s.sf_layout = sf_layout;
  s.vector_bytes = vector_bytes;
  s.inside = inside;
  return s;
}

static void check(const ops::Call &c) {
  const std::string &op = c.op().name;
  const int64_t h = c.dim("W") / 2, g = c.integer("num_per_channels");
  if (g != 128 && g != h)
    throw UserError(fmt::format("{}: argument 'num_per_channels' is {}; "
                                "requires 128 or H = {}",
                                op, g, h));
  if (g == h && h > 8192)
    throw UserError(fmt::format("{}: argument 'num_per_channels' is H = {}; "
                                "one group a row is supported up to H = 8192",
                                op, h));
  if (c.flag("use_tma_aligned_col_major_sf") && g != 128)
    throw UserError(fmt::format("{}: argument 'use_tma_aligned_col_major_sf' "
                                "is true with num_per_channels = {}; requires "
                                "num_per_channels == 128",
                                op, g));
  check_sf_flags(c);
  if (c.has("pos_to_token_topk") && !c.has("topk_weights"))
    throw UserError(fmt::format("{}: argument 'topk_weights' is None while "
                                "'pos_to_token_topk' is given; requires both",
                                op));
  if (c.has("clamped_count") && c.real("swiglu_clamp_value") == 0)
    throw UserError(fmt::format("{}: argument 'clamped_count' is given while "
                                "'swiglu_clamp_value' is None; requires a "
                                "clamp value",
                                op));
}

/// The tile: a whole row of H a block where 128 or 256 threads hold 8 to
/// 16 elements of it each in whole vectors (H = 1024, 2048, 4096 in bf16),
/// with no bounds checks; else per_token_cast's tiling with half its rows
/// (SwiGLU holds two inputs an output). On the H200 (benchmark shape,
/// 33757 x 2048, packed scales, no clamp / clamp 0.5, µs): 8 x 512 over
/// 128 threads 134.8 / 169.4 (132 registers with the clamp: three blocks a
/// SM); 4 x 512 118.9 / 124.6; 8 x 512 over 256 130.5 / 134.0; 2 x 1024
/// 119.9 / 126.5; 1 x 2048 115.7 / 121.4 with bounds checks, 105.5 / 112.0
/// without (and 102.1 / 108.1 with a row's values one a thread); 1 x 2048 over
/// 256 135.5 / 141.9; 2 x 2048 over 256 133.4 / 141.1.
PerTokenCastSpec swiglu_tiling(DType in, int64_t e, int64_t h, int64_t group) {
  PerTokenCastSpec t;
  t.in_dtype = in;
  const int64_t vector = 16 / static_cast<int64_t>(size_of(in));
  for (int64_t threads : {128, 256})
    if (h % (threads * vector) == 0 && h / threads <= 16) {
      t.group = static_cast<int32_t>(group);
      t.block_m = 1;
      t.block_k = static_cast<int32_t>(h);
      t.threads = static_cast<int32_t>(threads);
      t.inside = 1;
      return t;
    }
  t = per_token_cast_tiling(t, e, h, group);
  if (t.block_m > 1)
    t.block_m /= 2;
  if (t.parts > 0) {
    // Rows seen as parts need (parts, E, p) views, which SwiGLU's two
    // halves of x have not: the group padded to a power of two instead
    // (H = 1152: 2048, two rows a tile), as per_token_cast pads.
    t.parts = 0;
    t.group = t.block_k =
        static_cast<int32_t>(std::bit_ceil(static_cast<uint64_t>(h)));
    t.threads = 128;
    t.block_m = std::max(1, 2048 / t.block_k);
    t.vector_bytes = 0;
    t.inside = 0;
  }
  return t;
}

static SwigluForwardCastSpec spec(const ops::Call &c) {
  const PerTokenCastSpec t =
      swiglu_tiling(c.tensor("x").dtype, c.dim("E"), c.dim("W") / 2,
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
  // x's rows aligned to 16 bytes make both halves' rows aligned (H * size
  // is a multiple of 256), and out's (H % 128 == 0) too.
  s.vector_bytes = ops::vector_bytes(c, {"x", "out"});
  s.weights = c.has("pos_to_token_topk");
  s.pos_to_expert = c.has("pos_to_expert");
  s.clamp = c.real("swiglu_clamp_value") > 0;
  s.count = c.has("clamped_count");
  s.sf_clamp_min =
      std::bit_cast<uint32_t>(static_cast<float>(c.real("sf_clamp_min")));
  return s;
}

/// A per-row tensor `t` (N,) as the kernel reads it: (N, threads, 1) with
/// strides (1, 0, 0) where a tile is one row (row_by_thread), else (N,
/// copies) with strides (1, 0), copies such that a tile's rows x copies is
/// a multiple of the block's threads.
static rt::TensorView per_row_view(const SwigluForwardCastSpec &s,
                                   const rt::TensorView &t) {
  const int64_t n = t.numel();
  if (s.row_by_thread()) {
    const int64_t shape[3] = {n, s.threads, 1}, strides[3] = {1, 0, 0};
    return rt::TensorView::strided(t.data, t.dtype, shape, strides);
  }
  const int64_t shape[2] = {n, s.threads /
                                   std::gcd<int64_t>(s.block_m, s.threads)},
                strides[2] = {1, 0};
  return rt::TensorView::strided(t.data, t.dtype, shape, strides);
}

/// The kernel's views: x's two halves (E, H) gate and up; pos_to_expert
/// and topk_weights flattened (T * K), for the gather by
/// pos_to_token_topk, as per_row_view; clamped_count as (3, 1); packed
/// scales as bytes.
static void views(const ops::Call &c, const SwigluForwardCastSpec &s,
                  ops::KernelArgs &args) {
  const rt::TensorView &x = c.tensor("x");
  bind_swiglu_halves(x, args);
  if (s.pos_to_expert)
    args.tensor("row_expert", per_row_view(s, c.tensor("pos_to_expert")));
  if (s.weights)
    args.tensor("weight_src", per_row_view(s, c.tensor("topk_weights")));
  if (s.count) {
    const rt::TensorView &n = c.tensor("clamped_count");
    const int64_t shape[2] = {3, 1}, unit[2] = {1, 1};
    args.tensor("counts",
                rt::TensorView::strided(n.data, n.dtype, shape, unit));
  }
  if (s.sf_layout == SfLayout::packed_ue8m0)
    args.tensor("out_sf", ops::as_bytes(c.tensor("out_sf")));
}

static std::vector<ref::HostTensor> reference(const ops::HostCall &c) {
  std::optional<ref::HostTensor> weights, count;
  if (c.has("pos_to_token_topk"))
    weights = c.tensor("topk_weights");
  if (c.has("clamped_count"))
    count = ref::HostTensor::zeros(DType::i64, {3});
  std::optional<float> clamp, clamp_min;
  if (c.real("swiglu_clamp_value") > 0)
    clamp = static_cast<float>(c.real("swiglu_clamp_value"));
  if (c.real("sf_clamp_min") > 0)
    clamp_min = static_cast<float>(c.real("sf_clamp_min"));
  QuantTensor q = swiglu_forward_and_per_token_cast_ref(
      c.tensor("x"), "e4m3", c.integer("num_per_channels"),
      c.given("pos_to_token_topk"), weights, c.given("pos_to_expert"),
      c.flag("use_tma_aligned_col_major_sf"), c.flag("round_sf"),
      c.flag("use_packed_ue8m0"), clamp, count, clamp_min);
  return {q.data, q.sf, count ? *count : ref::HostTensor{}};
}

const ops::OpDef &swiglu_forward_and_per_token_cast_op() {
  static const ops::OpDef op = ops::make_op<SwigluForwardCastSpec>(
      {.name = "swiglu_forward_and_per_token_cast",
       .summary = "SwiGLU of x (E, 2H) = (gate | up), clamped, weighted and "
                  "masked per row, then a per-token e4m3 cast of the f32 "
                  "activation in groups of num_per_channels",
       .tensors =
           {ops::input("x", {DType::bf16, DType::f32}, "E, W",
                       ops::Layout::contiguous, "(gate | up), W = 2H"),
            ops::absent_by_default(ops::optional_input(
                "pos_to_token_topk", {DType::i32}, "E", ops::Layout::contiguous,
                "each row's index into topk_weights (flat), -1: padding")),
            ops::absent_by_default(ops::optional_input(
                "topk_weights", {DType::f32}, "T, K", ops::Layout::contiguous,
                "with pos_to_token_topk: each row's weight")),
            ops::optional_input("pos_to_expert", {DType::i32}, "E",
                                ops::Layout::contiguous,
                                "rows of a negative expert are zero"),
            ops::output("out", {DType::e4m3}, "", ops::Layout::contiguous,
                        "e4m3 (E, H)"),
            ops::output("out_sf", {DType::f32, DType::i32}, "",
                        ops::Layout::as_shaped,
                        "scales; layout by the flags (§3.3)"),
            ops::absent_by_default(ops::optional_output(
                "clamped_count", {DType::i64}, "3", ops::Layout::contiguous,
                "added to: #(g > C), #(u > C), #(u < -C) (requires "
                "swiglu_clamp_value)"))},
       .params = with_sf_flags(
           {ops::choice("fmt", "e4m3", {"e4m3"}, "the output format"),
            ops::integer("num_per_channels", 128, 1, 1 << 30,
                         "channels a group: 128 or H"),
            ops::real("swiglu_clamp_value", 0.0, 0.0,
                      "the clamp C of gate (above) and up (both sides); 0: "
                      "None"),
            ops::real("sf_clamp_min", 0.0, 0.0,
                      "the absmax clamp of the scales; 0: 1e-4")}),
       .dim_rules = {{.dim = "W", .min = 256, .multiple = 256}},
       .cli_shape = "E, W, T, K",
       // TileKernels' benchmark (4001 tokens a rank, 8 ranks, top 8 of 32
       // experts, H = 2048): its bytes make 33757 rows.
       .default_shape = {33757, 4096, 32008, 8},
       .check = check,
       .shape_of =
           [](std::string_view tensor, const ops::ShapeArgs &a) {
             const int64_t e = a.dim("E"), h = a.dim("W") / 2;
             if (tensor == "out")
               return ops::TensorShape{DType::e4m3, {e, h}, {h, 1}};
             const int64_t g = a.integer("num_per_channels");
             return sf_shape(e, (h + g - 1) / g, sf_layout_of(a));
           },
       .reference = reference},
      {spec, swiglu_forward_and_per_token_cast_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(swiglu_forward_and_per_token_cast_op);

void swiglu_forward_and_per_token_cast(
    const rt::TensorView &x, int64_t num_per_channels,
    const rt::TensorView &pos_to_token_topk, const rt::TensorView &topk_weights,
    const rt::TensorView &pos_to_expert, const rt::TensorView &out,
    const rt::TensorView &out_sf, const rt::TensorView &clamped_count,
    bool use_tma_aligned_col_major_sf, bool round_sf, bool use_packed_ue8m0,
    std::optional<float> swiglu_clamp_value, std::optional<float> sf_clamp_min,
    CUstream stream) {
  if (swiglu_clamp_value && !(*swiglu_clamp_value > 0))
    throw UserError(fmt::format("swiglu_forward_and_per_token_cast: argument "
                                "'swiglu_clamp_value' is {}; requires a "
                                "positive value or None",
                                *swiglu_clamp_value));
  if (sf_clamp_min && !(*sf_clamp_min > 0))
    throw UserError(fmt::format("swiglu_forward_and_per_token_cast: argument "
                                "'sf_clamp_min' is {}; requires a positive "
                                "value or None",
                                *sf_clamp_min));
  swiglu_forward_and_per_token_cast_op().call(
      {x, pos_to_token_topk, topk_weights, pos_to_expert, out, out_sf,
       clamped_count},
      {std::string("e4m3"), num_per_channels, swiglu_clamp_value.value_or(0.0f),
       sf_clamp_min.value_or(0.0f), use_tma_aligned_col_major_sf, round_sf,
       use_packed_ue8m0},
      stream);
}

} // namespace tilejit::quant
