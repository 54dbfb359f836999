// swiglu_backward_and_per_token_cast_ref.cpp - SwiGLU backward of a
// per-token quantized input (§11.2): out, the gradient (bf16 and re-quantized
// e4m3) and the routing-weight gradient.
#include "quant/detail.h"

#include "common/convert.h"

#include <cmath>
#include <fmt/format.h>

namespace tilejit::quant {

using detail::fail;

namespace {

struct Dims {
  int64_t E, H, T, k;
};

Dims check_args(std::string_view fn, const QuantTensor &x,
                const HostTensor &grad_out, const HostTensor &weight,
                const HostTensor &pos_to_token_topk,
                const HostTensor &token_topk_to_pos, int64_t bk) {
  if (x.data.rank() != 2 && x.data.rank() != 3)
    detail::check_rank(fn, "x.data", x.data, 2);
  detail::check_dtype(fn, "x.data", x.data, {DType::e4m3});
  detail::check_contiguous(fn, "x.data", x.data);
  const int64_t two_h = x.data.size(x.data.rank() - 1);
  const int64_t E = two_h == 0 ? 0 : x.data.numel() / two_h, H = two_h / 2;
  if (bk != 32 && bk != 128)
    fail(fn, fmt::format("argument 'num_per_channels' is {}; requires 32 or "
                         "128",
                         bk));
  if (two_h % 2 != 0 || H % bk != 0)
    fail(fn, fmt::format("argument 'x.data' has 2H = {} columns; requires "
                         "H % num_per_channels == 0 (num_per_channels = {})",
                         two_h, bk));
  detail::check_dtype(fn, "x.sf", x.sf, {DType::f32});
  detail::check_contiguous(fn, "x.sf", x.sf);
  detail::check_shape(fn, "x.sf", x.sf, {E, two_h / bk});
  detail::check_dtype(fn, "grad_out", grad_out, {DType::bf16});
  detail::check_contiguous(fn, "grad_out", grad_out);
  if (grad_out.numel() != E * H ||
      (grad_out.rank() > 0 && grad_out.size(grad_out.rank() - 1) != H))
    fail(fn, fmt::format("argument 'grad_out' is {}; requires {} rows of H = "
                         "{} elements",
                         grad_out.to_string(), E, H));
  detail::check_rank(fn, "weight", weight, 2);
  detail::check_dtype(fn, "weight", weight, {DType::f32});
  detail::check_contiguous(fn, "weight", weight);
  const int64_t T = weight.size(0), k = weight.size(1);
  detail::check_rank(fn, "pos_to_token_topk", pos_to_token_topk, 1);
  detail::check_dtype(fn, "pos_to_token_topk", pos_to_token_topk, {DType::i32});
  detail::check_shape(fn, "pos_to_token_topk", pos_to_token_topk, {E});
  detail::check_dtype(fn, "token_topk_to_pos", token_topk_to_pos, {DType::i32});
  detail::check_contiguous(fn, "token_topk_to_pos", token_topk_to_pos);
  detail::check_shape(fn, "token_topk_to_pos", token_topk_to_pos, {T, k});
  for (int64_t e = 0; e < E; ++e)
    if (pos_to_token_topk.at<int32_t>({e}) >= T * k)
      fail(fn, fmt::format("pos_to_token_topk[{}] is {}; requires a negative "
                           "value (padding) or an index < {} into weight",
                           e, pos_to_token_topk.at<int32_t>({e}), T * k));
  return {E, H, T, k};
}

} // namespace

SwigluBackwardResult swiglu_backward_and_per_token_cast_ref(
    const QuantTensor &x, const HostTensor &grad_out, const HostTensor &weight,
    const HostTensor &pos_to_token_topk, const HostTensor &token_topk_to_pos,
    int64_t num_per_channels, bool round_sf,
    std::optional<float> swiglu_clamp_value) {
  constexpr std::string_view fn = "swiglu_backward_and_per_token_cast_ref";
  const auto [E, H, T, k] =
      check_args(fn, x, grad_out, weight, pos_to_token_topk, token_topk_to_pos,
                 num_per_channels);
  const int64_t bk = num_per_channels;
  const uint8_t *xq = x.data.data<uint8_t>();
  const float *x_sf = x.sf.data<float>();
  const uint16_t *go_bits = grad_out.data<uint16_t>();
  const float *w_flat = weight.data<float>();
  SwigluBackwardResult r;
  r.out = HostTensor::zeros(DType::bf16, {E, H});
  r.x_grad = HostTensor::zeros(DType::bf16, {E, 2 * H});
  // Entries covered by neither rule below stay 0 (unwritten in the
  // original; a consistent mapping covers every entry).
  r.weight_grad = HostTensor::zeros(DType::f32, {T, k});
  detail::Matrix grad(E, 2 * H); // float32 dg | du, quantized below
  const int64_t groups = 2 * H / bk;
  for (int64_t e = 0; e < E; ++e) {
    const int32_t idx = pos_to_token_topk.at<int32_t>({e});
    const float w = idx >= 0 ? w_flat[idx] : 0.0f;
    double acc = 0.0; // a sum compared with a tolerance: float64
    for (int64_t c = 0; c < H; ++c) {
      float g = ref::e4m3_to_f32(xq[e * 2 * H + c]) * x_sf[e * groups + c / bk];
      float u = ref::e4m3_to_f32(xq[e * 2 * H + H + c]) *
                x_sf[e * groups + (H + c) / bk];
      bool cg = false, cu_hi = false, cu_lo = false;
      if (swiglu_clamp_value) {
        const float C = *swiglu_clamp_value;
        cg = g > C;
        cu_hi = u > C;
        cu_lo = u < -C;
        if (cg)
          g = C;
        if (cu_hi)
          u = C;
        if (cu_lo)
          u = -C;
      }
      const float go = ref::bf16_to_f32(go_bits[e * H + c]);
      const float t = 1.0f + ref::cuda_expf(-g);
      const float act = (g / t) * u;
      const float s = 1.0f / t;
      const float gws = (go * w) * s;
      const float dg = cg ? 0.0f : (gws * u) * std::fma(g, 1.0f - s, 1.0f);
      const float du = (cu_hi || cu_lo) ? 0.0f : gws * g;
      r.out.at<uint16_t>({e, c}) = ref::f32_to_bf16(act * w);
      r.x_grad.at<uint16_t>({e, c}) = ref::f32_to_bf16(dg);
      r.x_grad.at<uint16_t>({e, H + c}) = ref::f32_to_bf16(du);
      grad.at(e, c) = dg;
      grad.at(e, H + c) = du;
      acc += static_cast<double>(go) * static_cast<double>(act);
    }
    if (idx >= 0)
      r.weight_grad.data<float>()[idx] = static_cast<float>(acc);
  }
  const int32_t *to_pos = token_topk_to_pos.data<int32_t>();
  for (int64_t i = 0; i < T * k; ++i)
    if (to_pos[i] < 0)
      r.weight_grad.data<float>()[i] = 0.0f;
  detail::QuantizeOptions o;
  o.fmt = Fmt::e4m3;
  o.block = {1, bk};
  o.round_sf = round_sf;
  r.x_grad_fp8 = detail::quantize(grad, o);
  return r;
}

} // namespace tilejit::quant
