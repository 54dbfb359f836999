// swiglu_forward_and_per_token_cast_ref.cpp - SwiGLU forward with optional
// clamp, clamp counting and routing weights, then a per-token e4m3 cast of
// the float32 activation (§11.1).
#include "quant/detail.h"

#include <fmt/format.h>

namespace tilejit::quant {

using detail::fail;

namespace {

struct Args {
  int64_t E, H;
};

Args check_args(std::string_view fn, const HostTensor &x, int64_t bk,
                const std::optional<HostTensor> &pos_to_token_topk,
                const std::optional<HostTensor> &topk_weights,
                const std::optional<HostTensor> &pos_to_expert, bool col_major,
                bool round_sf, bool packed, std::optional<float> clamp_value,
                const std::optional<HostTensor> &clamped_count) {
  detail::check_rank(fn, "x", x, 2);
  detail::check_dtype(fn, "x", x, {DType::bf16, DType::f32});
  detail::check_contiguous(fn, "x", x);
  const int64_t E = x.size(0), H = x.size(1) / 2;
  if (x.size(1) % 256 != 0)
    fail(fn, fmt::format("argument 'x' has 2H = {} columns; requires "
                         "H % 128 == 0",
                         x.size(1)));
  if (bk != 128 && bk != H)
    fail(fn, fmt::format("argument 'num_per_channels' is {}; requires 128 or "
                         "H = {}",
                         bk, H));
  if (col_major && bk != 128)
    fail(fn, fmt::format("argument 'use_tma_aligned_col_major_sf' is true "
                         "with num_per_channels = {}; requires "
                         "num_per_channels == 128",
                         bk));
  detail::check_layout_flags(fn, col_major, round_sf, packed);
  if (pos_to_token_topk) {
    detail::check_rank(fn, "pos_to_token_topk", *pos_to_token_topk, 1);
    detail::check_dtype(fn, "pos_to_token_topk", *pos_to_token_topk,
                        {DType::i32});
    detail::check_shape(fn, "pos_to_token_topk", *pos_to_token_topk, {E});
    if (!topk_weights)
      fail(fn, "argument 'topk_weights' is None while 'pos_to_token_topk' is "
               "given; requires both");
    detail::check_rank(fn, "topk_weights", *topk_weights, 2);
    detail::check_dtype(fn, "topk_weights", *topk_weights, {DType::f32});
    detail::check_contiguous(fn, "topk_weights", *topk_weights);
    const int64_t n = topk_weights->numel();
    for (int64_t r = 0; r < E; ++r)
      if (pos_to_token_topk->at<int32_t>({r}) >= n)
        fail(fn, fmt::format("pos_to_token_topk[{}] is {}; requires a "
                             "negative value (padding) or an index < {} "
                             "into topk_weights",
                             r, pos_to_token_topk->at<int32_t>({r}), n));
  }
  if (pos_to_expert) {
    detail::check_rank(fn, "pos_to_expert", *pos_to_expert, 1);
    detail::check_dtype(fn, "pos_to_expert", *pos_to_expert, {DType::i32});
    detail::check_shape(fn, "pos_to_expert", *pos_to_expert, {E});
  }
  if (clamped_count) {
    if (!clamp_value)
      fail(fn, "argument 'clamped_count' is given while 'swiglu_clamp_value' "
               "is None; requires a clamp value");
    detail::check_dtype(fn, "clamped_count", *clamped_count, {DType::i64});
    detail::check_shape(fn, "clamped_count", *clamped_count, {3});
  }
  return {E, H};
}

} // namespace

QuantTensor swiglu_forward_and_per_token_cast_ref(
    const HostTensor &x, std::string_view fmt, int64_t num_per_channels,
    const std::optional<HostTensor> &pos_to_token_topk,
    const std::optional<HostTensor> &topk_weights,
    const std::optional<HostTensor> &pos_to_expert,
    bool use_tma_aligned_col_major_sf, bool round_sf, bool use_packed_ue8m0,
    std::optional<float> swiglu_clamp_value,
    const std::optional<HostTensor> &clamped_count,
    std::optional<float> sf_clamp_min) {
  constexpr std::string_view fn = "swiglu_forward_and_per_token_cast_ref";
  detail::parse_fmt(fn, fmt, {Fmt::e4m3});
  const auto [E, H] =
      check_args(fn, x, num_per_channels, pos_to_token_topk, topk_weights,
                 pos_to_expert, use_tma_aligned_col_major_sf, round_sf,
                 use_packed_ue8m0, swiglu_clamp_value, clamped_count);
  const detail::Matrix in = detail::to_matrix(x);
  detail::Matrix v(E, H);
  int64_t counts[3] = {0, 0, 0};
  for (int64_t r = 0; r < E; ++r) {
    // Rows with pos_to_expert < 0 are unspecified in the original; we give
    // them zeros (the test's masked reference), and they are not counted.
    if (pos_to_expert && pos_to_expert->at<int32_t>({r}) < 0)
      continue;
    // Weight 0 for a negative index, as the reference does (the kernel
    // reads an uninitialized weight there).
    float w = 0.0f;
    if (pos_to_token_topk) {
      const int32_t idx = pos_to_token_topk->at<int32_t>({r});
      if (idx >= 0)
        w = topk_weights->data<float>()[idx];
    }
    for (int64_t c = 0; c < H; ++c) {
      float g = in.at(r, c), u = in.at(r, H + c);
      if (swiglu_clamp_value) {
        const float C = *swiglu_clamp_value;
        counts[0] += g > C;
        counts[1] += u > C;
        counts[2] += u < -C;
        g = std::min(g, C);
        u = std::min(std::max(u, -C), C);
      }
      float act = detail::swiglu(g, u);
      if (pos_to_token_topk)
        act = act * w;
      v.at(r, c) = act;
    }
  }
  if (clamped_count)
    for (int64_t i = 0; i < 3; ++i)
      clamped_count->at<int64_t>({i}) += counts[i];
  detail::QuantizeOptions o;
  o.fmt = Fmt::e4m3;
  o.block = {1, num_per_channels};
  o.round_sf = round_sf;
  o.layout = sf_layout_of(use_tma_aligned_col_major_sf, use_packed_ue8m0);
  o.clamp_min = sf_clamp_min;
  return detail::quantize(v, o);
}

} // namespace tilejit::quant
