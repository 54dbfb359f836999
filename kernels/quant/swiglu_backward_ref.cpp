// swiglu_backward_ref.cpp - TileKernels 2.1's plain swiglu_backward
// (tk21_ops §3.9) on the psum row layout, in the kernel's float32 order.
#include "quant/detail.h"

#include "common/convert.h"

#include <cfloat>
#include <cmath>
#include <fmt/format.h>

namespace tilejit::quant {

using detail::fail;

std::vector<bool> psum_padding_rows(const std::optional<HostTensor> &psum,
                                    int64_t rows, int64_t alignment) {
  std::vector<bool> padding(static_cast<size_t>(rows), false);
  if (!psum)
    return padding;
  // After each expert's predecessor (the first: none) and after the last:
  // from its end to the aligned start of the next.
  std::vector<int64_t> starts = {0};
  for (int64_t end : detail::psum_ends("psum_padding_rows", *psum, alignment))
    starts.push_back(end);
  for (int64_t start : starts) {
    const int64_t end = (start + alignment - 1) / alignment * alignment;
    for (int64_t r = start; r < std::min(end, rows); ++r)
      padding[static_cast<size_t>(r)] = true;
  }
  return padding;
}

SwigluBackward21Result
swiglu_backward_ref(const HostTensor &x, const HostTensor &act_x_grad,
                    std::string_view fmt, const std::optional<HostTensor> &psum,
                    const std::optional<HostTensor> &topk_weights,
                    std::optional<float> routed_scaling_factor,
                    std::optional<float> clamp_value, bool do_recompute,
                    int64_t token_alignment) {
  constexpr std::string_view fn = "swiglu_backward_ref";
  if (fmt != "bf16" && fmt != "fp32")
    fail(fn,
         fmt::format("argument 'fmt' is '{}'; requires 'bf16' or 'fp32'", fmt));
  const int64_t T = x.size(0), H = detail::check_swiglu21_args(
                                   fn, x, topk_weights, routed_scaling_factor);
  detail::check_dtype(fn, "act_x_grad", act_x_grad, {x.dtype()});
  detail::check_shape(fn, "act_x_grad", act_x_grad, {T, H});
  const std::vector<bool> padding = psum_padding_rows(psum, T, token_alignment);
  const detail::Matrix in = detail::to_matrix(x),
                       grad = detail::to_matrix(act_x_grad);
  const bool bf16 = fmt == "bf16";
  const DType out_dtype = bf16 ? DType::bf16 : DType::f32;
  SwigluBackward21Result res;
  res.x_grad = HostTensor::zeros(out_dtype, {T, 2 * H});
  if (topk_weights)
    res.weight_grad = HostTensor::zeros(DType::f32, {T});
  if (do_recompute)
    res.act_out = HostTensor::zeros(out_dtype, {T, H});
  auto put = [&](HostTensor &t, int64_t i, int64_t j, float v) {
    if (bf16)
      t.at<uint16_t>({i, j}) = ref::f32_to_bf16(v);
    else
      t.at<float>({i, j}) = v;
  };
  const float rsf = routed_scaling_factor.value_or(1.0f);
  for (int64_t t = 0; t < T; ++t) {
    if (padding[static_cast<size_t>(t)])
      continue; // every output of a padding row is 0
    const float w = topk_weights ? topk_weights->data<float>()[t] * rsf : 1.0f;
    double weight_grad = 0.0;
    for (int64_t j = 0; j < H; ++j) {
      float l = in.at(t, j), r = in.at(t, H + j);
      bool cl = false, cr = false;
      if (clamp_value) {
        const float c = *clamp_value;
        cl = l > c;
        cr = r > c || r < -c;
        l = std::fmin(l, c);
        r = std::fmax(std::fmin(r, c), -c);
      }
      const float g = grad.at(t, j);
      const float den = 1.0f + ref::cuda_expf(-l);
      const float s = 1.0f / den;
      float act = 0.0f;
      if (topk_weights || do_recompute) {
        const float e0 = l * s;
        const float residual = std::fma(e0, std::fmin(den, FLT_MAX), -l);
        const float silu = std::fma(-residual, s, e0);
        act = silu * r;
      }
      const float gs = g * w * s;
      const float dl = cl ? 0.0f : (gs * r) * std::fma(l, 1.0f - s, 1.0f);
      const float dr = cr ? 0.0f : gs * l;
      put(res.x_grad, t, j, dl);
      put(res.x_grad, t, H + j, dr);
      if (do_recompute)
        put(res.act_out, t, j, act * w);
      weight_grad += static_cast<double>(g) * static_cast<double>(act);
    }
    if (topk_weights)
      res.weight_grad.at<float>({t}) = rsf * static_cast<float>(weight_grad);
  }
  return res;
}

} // namespace tilejit::quant
