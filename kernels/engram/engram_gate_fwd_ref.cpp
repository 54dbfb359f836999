// engram_gate_fwd_ref.cpp - Engram gate forward: x + sigmoid(signed sqrt of
// the normalised, weighted x.k) * v per (token, head) (spec §2.3).
#include "common/convert.h"
#include "engram/gate_math.h"
#include "engram/reference.h"
#include "engram/validate.h"

#include <cmath>

namespace tilejit::engram {

namespace {

constexpr std::string_view kFn = "engram_gate_fwd_ref";

} // namespace

EngramGateFwdResult
engram_gate_fwd_ref(const HostTensor &hidden_states, const HostTensor &k,
                    const HostTensor &v, const HostTensor &weight_fused,
                    float eps, float clamp_value, bool save_for_backward,
                    const std::optional<HostTensor> &image_token_mask) {
  using namespace detail;
  const GateShape s = check_gate_inputs(kFn, hidden_states, k, v, weight_fused);
  const int64_t T = s.num_tokens, hc = s.hc, D = s.hidden;
  const uint8_t *image = image_flags(kFn, image_token_mask, T);

  EngramGateFwdResult r;
  r.out = HostTensor::zeros(DType::bf16, {T, hc, D});
  HostTensor dot = HostTensor::zeros(DType::f32, {T, hc});
  HostTensor gate = HostTensor::zeros(DType::f32, {T, hc});
  HostTensor rstd_x = HostTensor::zeros(DType::f32, {T, hc});
  HostTensor rstd_k = HostTensor::zeros(DType::f32, {T, hc});

  const GateRows rows(hidden_states, k, v, weight_fused);
  uint16_t *out = r.out.data<uint16_t>();
  const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(D));
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t h = 0; h < hc; ++h) {
      double sx = 0, sk = 0, p = 0;
      for (int64_t d = 0; d < D; ++d) {
        double xd = rows.x(t, h, d), kd = rows.k(t, h, d);
        sx += xd * xd;
        sk += kd * kd;
        p += xd * rows.w(h, d) * kd; // exact product: 8 + 24 + 8 bits
      }
      double rx = 1.0 / std::sqrt(sx / D + eps);
      double rk = 1.0 / std::sqrt(sk / D + eps);
      double z = p * rx * rk * inv_sqrt_d;
      float g = static_cast<float>(gate_from_score(z, clamp_value));
      for (int64_t d = 0; d < D; ++d) {
        // The original's `x + g * v` in fp32 is contracted to one FMA by nvcc
        // (spec §0.2); one rounding to fp32, then RNE to bf16.
        float o = image && image[t] != 0
                      ? rows.xf(t, h, d)
                      : std::fma(g, rows.vf(t, d), rows.xf(t, h, d));
        out[(t * hc + h) * D + d] = ref::f32_to_bf16(o);
      }
      dot.data<float>()[t * hc + h] = static_cast<float>(p);
      gate.data<float>()[t * hc + h] = g;
      rstd_x.data<float>()[t * hc + h] = static_cast<float>(rx);
      rstd_k.data<float>()[t * hc + h] = static_cast<float>(rk);
    }
  }
  if (save_for_backward) {
    r.dot = dot;
    r.gate_score = gate;
    r.rstd_x = rstd_x;
    r.rstd_k = rstd_k;
  }
  return r;
}

} // namespace tilejit::engram
