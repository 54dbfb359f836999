// engram_gate_bwd_ref.cpp - Engram gate backward: gradients of x, k, v and
// per-block partial sums of the fused weight's gradient (spec §2.4).
#include "common/convert.h"
#include "common/parallel.h"
#include "engram/gate_math.h"
#include "engram/reference.h"
#include "engram/validate.h"

#include <algorithm>
#include <cmath>

namespace tilejit::engram {

namespace {

constexpr std::string_view kFn = "engram_gate_bwd_ref";

/// Strides of torch.empty_like(t): t's own strides when its elements fill
/// their span without gaps or overlap (in any dim order), else row-major.
std::vector<int64_t> empty_like_strides(const HostTensor &t) {
  std::vector<int> dims;
  for (int i = 0; i < t.rank(); ++i)
    if (t.size(i) != 1)
      dims.push_back(i);
  std::stable_sort(dims.begin(), dims.end(),
                   [&](int a, int b) { return t.stride(a) < t.stride(b); });
  int64_t expected = 1;
  bool dense = t.numel() > 0;
  for (int i : dims) {
    dense = dense && t.stride(i) == expected;
    expected *= t.size(i);
  }
  return dense ? t.strides() : ref::contiguous_strides(t.shape());
}

void check_saved(std::string_view arg, const HostTensor &t, int64_t T,
                 int64_t hc) {
  detail::check_dtype(kFn, arg, t, DType::f32);
  detail::check_shape(kFn, arg, t, {T, hc}, "[T, hc]");
  detail::check_contiguous(kFn, arg, t);
}

} // namespace

EngramGateBwdResult engram_gate_bwd_ref(
    const HostTensor &grad_out, const HostTensor &hidden_states,
    const HostTensor &k, const HostTensor &v, const HostTensor &weight_fused,
    const HostTensor &dot, const HostTensor &gate_score,
    const HostTensor &rstd_x, const HostTensor &rstd_k, float clamp_value,
    int64_t num_sms, const std::optional<HostTensor> &image_token_mask) {
  using namespace detail;
  const GateShape s = check_gate_inputs(kFn, hidden_states, k, v, weight_fused);
  const int64_t T = s.num_tokens, hc = s.hc, D = s.hidden;
  if (hc != 4)
    throw UserError(fmt::format("{}: argument 'hidden_states' has hc = {} "
                                "heads; requires hc == 4",
                                kFn, hc));
  check_dtype(kFn, "grad_out", grad_out, DType::bf16);
  check_shape(kFn, "grad_out", grad_out, {T, hc, D}, "[T, hc, D]");
  check_contiguous(kFn, "grad_out", grad_out);
  check_saved("dot", dot, T, hc);
  check_saved("gate_score", gate_score, T, hc);
  check_saved("rstd_x", rstd_x, T, hc);
  check_saved("rstd_k", rstd_k, T, hc);
  const uint8_t *image = image_flags(kFn, image_token_mask, T);
  if (num_sms <= 0)
    throw UserError(fmt::format("{}: argument 'num_sms' is {}; requires > 0",
                                kFn, num_sms));

  EngramGateBwdResult r;
  r.grad_x = HostTensor::zeros(DType::bf16, {T, hc, D});
  r.grad_k =
      HostTensor::zeros_strided(DType::bf16, k.shape(), empty_like_strides(k));
  r.grad_v = HostTensor::zeros(DType::bf16, {T, D});
  r.grad_w_partial = HostTensor::zeros(DType::f32, {num_sms, hc, D});

  const GateRows rows(hidden_states, k, v, weight_fused);
  const uint16_t *go = grad_out.data<uint16_t>();
  auto go_at = [&](int64_t t, int64_t h, int64_t d) -> double {
    return ref::bf16_to_f32(go[(t * hc + h) * D + d]);
  };
  uint16_t *gx = r.grad_x.data<uint16_t>();
  uint16_t *gk = r.grad_k.data<uint16_t>();
  uint16_t *gv = r.grad_v.data<uint16_t>();
  const int64_t gk_t = r.grad_k.stride(0), gk_h = r.grad_k.stride(1);
  const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(D));
  auto bf16 = [](double value) {
    return ref::f32_to_bf16(static_cast<float>(value));
  };

  // Persistent block b owns tokens [b*per_block, min((b+1)*per_block, T)).
  // Blocks share nothing (their tokens and partial rows): on the machine's
  // threads.
  const int64_t per_block = (T + num_sms - 1) / num_sms;
  ref::parallel_ranges(num_sms, 1, [&](int64_t first, int64_t last) {
    std::vector<double> grad_w(hc * D);
    for (int64_t b = first; b < last; ++b) {
      std::fill(grad_w.begin(), grad_w.end(), 0.0);
      const int64_t begin = std::min(b * per_block, T);
      const int64_t end = std::min(begin + per_block, T);
      for (int64_t t = begin; t < end; ++t) {
        if (image && image[t] != 0) { // grad_x = grad_out; the rest stays 0
          std::copy_n(go + t * hc * D, hc * D, gx + t * hc * D);
          continue;
        }
        for (int64_t h = 0; h < hc; ++h) {
          const double p = dot.data<float>()[t * hc + h];
          const double g = gate_score.data<float>()[t * hc + h];
          const double rx = rstd_x.data<float>()[t * hc + h];
          const double rk = rstd_k.data<float>()[t * hc + h];
          const double c = inv_sqrt_d * rx * rk; // z = P * c
          double dldg = 0;
          for (int64_t d = 0; d < D; ++d)
            dldg += go_at(t, h, d) * rows.v(t, d);
          // dL/dP: zero where the clamp holds |z| constant. P == 0 is treated
          // as clamped too, so clamp_value <= 0 gives 0 rather than the
          // original's 0 * inf = NaN at z == 0.
          double dldp = 0;
          if (!(std::fabs(p) * c < clamp_value) && p != 0)
            dldp = dldg * g * (1 - g) * 0.5 * std::sqrt(c / std::fabs(p));
          const double ax = p * rx * rx / D, ak = p * rk * rk / D;
          for (int64_t d = 0; d < D; ++d) {
            const double xd = rows.x(t, h, d), kd = rows.k(t, h, d),
                         wd = rows.w(h, d);
            gx[(t * hc + h) * D + d] =
                bf16(go_at(t, h, d) + dldp * (kd * wd - xd * ax));
            gk[t * gk_t + h * gk_h + d] = bf16(dldp * (xd * wd - kd * ak));
            grad_w[h * D + d] += dldp * xd * kd;
          }
        }
        for (int64_t d = 0; d < D; ++d) {
          double sum = 0; // over the heads in order, from h = 0
          for (int64_t h = 0; h < hc; ++h)
            sum += go_at(t, h, d) * gate_score.data<float>()[t * hc + h];
          gv[t * D + d] = bf16(sum);
        }
      }
      float *partial = r.grad_w_partial.data<float>() + b * hc * D;
      for (int64_t i = 0; i < hc * D; ++i)
        partial[i] = static_cast<float>(grad_w[i]);
    }
  });
  return r;
}

} // namespace tilejit::engram
