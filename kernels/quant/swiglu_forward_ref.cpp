// swiglu_forward_ref.cpp - TileKernels 2.1's plain swiglu_forward (tk21_ops
// §3.8) on the psum row layout: SwiGLU with optional clamp and its four
// counters, routing weights times routed_scaling_factor, bf16 or f32 out.
#include "quant/detail.h"

#include "common/convert.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace tilejit::quant {

using detail::fail;

std::vector<bool> psum_valid_rows(const std::optional<HostTensor> &psum,
                                  int64_t rows, int64_t alignment) {
  std::vector<bool> valid(static_cast<size_t>(rows), !psum);
  if (!psum)
    return valid;
  int64_t previous = 0;
  for (int64_t end : detail::psum_ends("psum_valid_rows", *psum, alignment)) {
    const int64_t start = (previous + alignment - 1) / alignment * alignment;
    for (int64_t r = start; r < std::min(end, rows); ++r)
      valid[static_cast<size_t>(r)] = true;
    previous = end;
  }
  return valid;
}

namespace {

/// The f32 activations of the valid rows (0 elsewhere), with the checks
/// shared by both 2.1 forward ops and the clamp counters added to.
detail::Matrix activations(std::string_view fn, const HostTensor &x,
                           const std::optional<HostTensor> &psum,
                           const std::optional<HostTensor> &topk_weights,
                           std::optional<float> routed_scaling_factor,
                           std::optional<float> clamp_value,
                           const std::optional<HostTensor> &clamped_count,
                           int64_t token_alignment) {
  const int64_t T = x.size(0), H = detail::check_swiglu21_args(
                                   fn, x, topk_weights, routed_scaling_factor);
  if (clamped_count) {
    if (!clamp_value)
      fail(fn, "argument 'clamped_count' is given while 'clamp_value' is "
               "None; requires a clamp value");
    detail::check_dtype(fn, "clamped_count", *clamped_count, {DType::i64});
    detail::check_shape(fn, "clamped_count", *clamped_count, {4});
  }
  const std::vector<bool> valid = psum_valid_rows(psum, T, token_alignment);
  const detail::Matrix in = detail::to_matrix(x);
  detail::Matrix a(T, H);
  int64_t counts[4] = {0, 0, 0, 0};
  for (int64_t t = 0; t < T; ++t) {
    if (!valid[static_cast<size_t>(t)])
      continue;
    const float w = topk_weights ? topk_weights->data<float>()[t] *
                                       routed_scaling_factor.value_or(1.0f)
                                 : 1.0f;
    counts[3] += H;
    for (int64_t j = 0; j < H; ++j) {
      float l = in.at(t, j), r = in.at(t, H + j);
      if (clamp_value) {
        const float c = *clamp_value;
        counts[0] += l > c;
        counts[1] += r > c;
        counts[2] += r < -c;
        l = std::fmin(l, c);
        r = std::fmax(std::fmin(r, c), -c);
      }
      float v = detail::swiglu(l, r);
      if (topk_weights)
        v = v * w;
      a.at(t, j) = v;
    }
  }
  if (clamped_count)
    for (int64_t i = 0; i < 4; ++i)
      clamped_count->at<int64_t>({i}) += counts[i];
  return a;
}

} // namespace

HostTensor swiglu_forward_ref(const HostTensor &x, std::string_view fmt,
                              const std::optional<HostTensor> &psum,
                              const std::optional<HostTensor> &topk_weights,
                              std::optional<float> routed_scaling_factor,
                              std::optional<float> clamp_value,
                              const std::optional<HostTensor> &clamped_count,
                              int64_t token_alignment) {
  constexpr std::string_view fn = "swiglu_forward_ref";
  if (fmt != "bf16" && fmt != "fp32")
    fail(fn,
         fmt::format("argument 'fmt' is '{}'; requires 'bf16' or 'fp32'", fmt));
  const detail::Matrix a =
      activations(fn, x, psum, topk_weights, routed_scaling_factor, clamp_value,
                  clamped_count, token_alignment);
  const bool bf16 = fmt == "bf16";
  HostTensor out =
      HostTensor::zeros(bf16 ? DType::bf16 : DType::f32, {a.rows, a.cols});
  for (int64_t t = 0; t < a.rows; ++t)
    for (int64_t j = 0; j < a.cols; ++j) {
      if (bf16)
        out.at<uint16_t>({t, j}) = ref::f32_to_bf16(a.at(t, j));
      else
        out.at<float>({t, j}) = a.at(t, j);
    }
  return out;
}

QuantTensor swiglu_forward_and_per_token_cast_21_ref(
    const HostTensor &x, std::string_view fmt, int64_t num_per_channels,
    const std::optional<HostTensor> &psum,
    const std::optional<HostTensor> &topk_weights,
    std::optional<float> routed_scaling_factor,
    bool use_tma_aligned_col_major_sf, bool round_sf, bool use_packed_ue8m0,
    std::optional<float> clamp_value,
    const std::optional<HostTensor> &clamped_count, int64_t token_alignment) {
  constexpr std::string_view fn = "swiglu_forward_and_per_token_cast_21_ref";
  detail::parse_fmt(fn, fmt, {Fmt::e4m3});
  if (num_per_channels != 32 && num_per_channels != 128)
    fail(fn, fmt::format("argument 'num_per_channels' is {}; requires 32 or "
                         "128",
                         num_per_channels));
  detail::check_layout_flags(fn, use_tma_aligned_col_major_sf, round_sf,
                             use_packed_ue8m0);
  const detail::Matrix a =
      activations(fn, x, psum, topk_weights, routed_scaling_factor, clamp_value,
                  clamped_count, token_alignment);
  return detail::quantize(
      a,
      detail::quantize_options(Fmt::e4m3, {1, num_per_channels}, round_sf,
                               use_tma_aligned_col_major_sf, use_packed_ue8m0));
}

} // namespace tilejit::quant
