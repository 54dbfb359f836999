// gate_math.h - Pieces shared by the Engram gate forward and backward
// references: the input checks, element access to x, k, v, w, and the gate.
#pragma once

#include "common/convert.h"
#include "engram/validate.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tilejit::engram::detail {

struct GateShape {
  int64_t num_tokens, hc, hidden;
};

/// hidden_states bf16 (T, hc, D) contiguous; k bf16 (T, hc, D) with a unit
/// last stride; v bf16 (T, D) with a unit last stride; weight_fused f32
/// (hc, D) contiguous; D a positive multiple of 256.
inline GateShape check_gate_inputs(std::string_view fn,
                                   const HostTensor &hidden_states,
                                   const HostTensor &k, const HostTensor &v,
                                   const HostTensor &weight_fused) {
  check_dtype(fn, "hidden_states", hidden_states, DType::bf16);
  check_dtype(fn, "k", k, DType::bf16);
  check_dtype(fn, "v", v, DType::bf16);
  check_dtype(fn, "weight_fused", weight_fused, DType::f32);
  check_rank(fn, "hidden_states", hidden_states, 3, "[T, hc, D]");
  const int64_t T = hidden_states.size(0), hc = hidden_states.size(1),
                D = hidden_states.size(2);
  check_shape(fn, "k", k, {T, hc, D}, "[T, hc, D]");
  check_shape(fn, "v", v, {T, D}, "[T, D]");
  check_shape(fn, "weight_fused", weight_fused, {hc, D}, "[hc, D]");
  // The original's tiles are 32 lanes x 8 elements; the spec's tested hidden
  // sizes are all multiples of 256 (inferred requirement for the forward).
  check_hidden_multiple(fn, "hidden_states", D, 256);
  check_contiguous(fn, "hidden_states", hidden_states);
  check_unit_last_stride(fn, "k", k);
  check_unit_last_stride(fn, "v", v);
  check_contiguous(fn, "weight_fused", weight_fused);
  return {T, hc, D};
}

/// Element access (as float) to the gate's inputs; x is contiguous, k and v
/// have free outer strides.
class GateRows {
public:
  GateRows(const HostTensor &x, const HostTensor &k, const HostTensor &v,
           const HostTensor &w)
      : x_(x.data<uint16_t>()), k_(k.data<uint16_t>()), v_(v.data<uint16_t>()),
        w_(w.data<float>()), hc_(x.size(1)), hidden_(x.size(2)),
        k_t_(k.stride(0)), k_h_(k.stride(1)), v_t_(v.stride(0)) {}

  float xf(int64_t t, int64_t h, int64_t d) const {
    return ref::bf16_to_f32(x_[(t * hc_ + h) * hidden_ + d]);
  }
  float kf(int64_t t, int64_t h, int64_t d) const {
    return ref::bf16_to_f32(k_[t * k_t_ + h * k_h_ + d]);
  }
  float vf(int64_t t, int64_t d) const {
    return ref::bf16_to_f32(v_[t * v_t_ + d]);
  }
  double x(int64_t t, int64_t h, int64_t d) const { return xf(t, h, d); }
  double k(int64_t t, int64_t h, int64_t d) const { return kf(t, h, d); }
  double v(int64_t t, int64_t d) const { return vf(t, d); }
  double w(int64_t h, int64_t d) const { return w_[h * hidden_ + d]; }

private:
  const uint16_t *x_, *k_, *v_;
  const float *w_;
  int64_t hc_, hidden_, k_t_, k_h_, v_t_;
};

/// g = sigmoid(sign(z) * sqrt(max(|z|, clamp))). z == 0 counts as positive,
/// as in the original kernel (copysign of +0), where torch's reference gives
/// 0.5; a NaN score (only from NaN inputs, or eps = 0 on an all-zero row)
/// gives a NaN gate rather than the kernel's fmaxf-dependent value.
inline double gate_from_score(double z, double clamp_value) {
  if (std::isnan(z))
    return std::numeric_limits<double>::quiet_NaN();
  double r = std::sqrt(std::max(std::fabs(z), clamp_value));
  if (z < 0)
    r = -r;
  return 1.0 / (1.0 + std::exp(-r));
}

} // namespace tilejit::engram::detail
