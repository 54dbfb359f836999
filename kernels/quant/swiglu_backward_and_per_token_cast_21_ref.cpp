// swiglu_backward_and_per_token_cast_21_ref.cpp - TileKernels 2.1's FP8
// swiglu_backward_and_per_token_cast (tk21_ops §3.9): the plain backward of
// the dequantized x in f32, its gradient cast per token to e4m3 from the
// f32 values, and zero scales on psum padding rows.
#include "quant/detail.h"

#include "common/convert.h"

#include <fmt/format.h>

namespace tilejit::quant {

using detail::fail;

namespace {

/// A bf16 copy of a contiguous f32 tensor (shapeless stays shapeless).
HostTensor to_bf16(const HostTensor &t) {
  if (t.rank() == 0)
    return t;
  HostTensor out = HostTensor::zeros(DType::bf16, t.shape());
  for (int64_t i = 0; i < t.numel(); ++i)
    out.data<uint16_t>()[i] = ref::f32_to_bf16(t.data<float>()[i]);
  return out;
}

} // namespace

SwigluBackwardCast21Result swiglu_backward_and_per_token_cast_21_ref(
    const QuantTensor &x, const HostTensor &act_x_grad,
    int64_t num_per_channels, const std::optional<HostTensor> &psum,
    const std::optional<HostTensor> &topk_weights,
    std::optional<float> routed_scaling_factor,
    std::optional<float> clamp_value, bool do_recompute,
    int64_t token_alignment, bool use_tma_aligned_col_major_sf, bool round_sf,
    bool use_packed_ue8m0) {
  constexpr std::string_view fn = "swiglu_backward_and_per_token_cast_21_ref";
  detail::check_rank(fn, "x", x.data, 2);
  detail::check_dtype(fn, "x", x.data, {DType::e4m3});
  detail::check_contiguous(fn, "x", x.data);
  const int64_t T = x.data.size(0), W = x.data.size(1), H = W / 2;
  if (W % 128 != 0)
    fail(fn, fmt::format("argument 'x' has 2H = {} columns; requires H % 64 "
                         "== 0",
                         W));
  detail::check_rank(fn, "x.sf", x.sf, 2);
  detail::check_dtype(fn, "x.sf", x.sf, {DType::f32});
  detail::check_contiguous(fn, "x.sf", x.sf);
  const int64_t sf_cols = x.sf.size(1);
  if (x.sf.size(0) != T || sf_cols <= 0 || W % sf_cols != 0 ||
      (W / sf_cols != 32 && W / sf_cols != 128) || H % (W / sf_cols) != 0)
    fail(fn, fmt::format("argument 'x.sf' is f32[{}, {}]; requires [{}, 2H "
                         "/ bk] with bk 32 or 128 dividing H = {}",
                         x.sf.size(0), sf_cols, T, H));
  if (num_per_channels != 32 && num_per_channels != 128)
    fail(fn, fmt::format("argument 'num_per_channels' is {}; requires 32 or "
                         "128",
                         num_per_channels));
  if (H % num_per_channels != 0)
    fail(fn, fmt::format("argument 'num_per_channels' is {}; requires it to "
                         "divide H = {}",
                         num_per_channels, H));
  detail::check_layout_flags(fn, use_tma_aligned_col_major_sf, round_sf,
                             use_packed_ue8m0);
  detail::check_dtype(fn, "act_x_grad", act_x_grad, {DType::bf16, DType::f32});
  detail::check_shape(fn, "act_x_grad", act_x_grad, {T, H});

  const HostTensor x_f32 = dequantize_ref(x, {1, W / sf_cols});
  const HostTensor g_f32 = detail::to_tensor(detail::to_matrix(act_x_grad));
  SwigluBackward21Result plain = swiglu_backward_ref(
      x_f32, g_f32, "fp32", psum, topk_weights, routed_scaling_factor,
      clamp_value, do_recompute, token_alignment);

  SwigluBackwardCast21Result res;
  res.x_grad = to_bf16(plain.x_grad);
  res.weight_grad = plain.weight_grad;
  res.act_out = to_bf16(plain.act_out);
  // Cast from the f32 gradient, not from the rounded bf16 one.
  res.x_grad_fp8 = detail::quantize(
      detail::to_matrix(plain.x_grad),
      detail::quantize_options(Fmt::e4m3, {1, num_per_channels}, round_sf,
                               use_tma_aligned_col_major_sf, use_packed_ue8m0));
  // Every scale of a padding row is 0 (a packed word's four bytes too).
  const std::vector<bool> padding = psum_padding_rows(psum, T, token_alignment);
  HostTensor &sf = res.x_grad_fp8.sf;
  for (int64_t t = 0; t < T; ++t) {
    if (!padding[static_cast<size_t>(t)])
      continue;
    for (int64_t j = 0; j < sf.size(1); ++j) {
      if (sf.dtype() == DType::f32)
        sf.at<float>({t, j}) = 0.0f;
      else
        sf.at<int32_t>({t, j}) = 0;
    }
  }
  return res;
}

} // namespace tilejit::quant
