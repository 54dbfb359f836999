// mhc_head_compute_mix_ref.cpp - CPU reference of mhc_head_compute_mix
// (MHCHeadComputeMix, spec §3.7): the head's per-stream sigmoid mix.
#include "mhc/mhc_common.h"
#include "mhc/reference.h"

#include <cmath>

namespace tilejit::mhc {

using namespace detail;

namespace {

void check_head_args(const char *fn, const HostTensor &input_mix,
                     const HostTensor &mhc_scale, const HostTensor &mhc_base) {
  check_tensor(fn, "input_mix", input_mix, DType::f32, 1, "(..., mhc)");
  check_tensor(fn, "mhc_scale", mhc_scale, DType::f32, 0, "");
  check_shape(fn, "mhc_scale", mhc_scale, {1});
  check_tensor(fn, "mhc_base", mhc_base, DType::f32, 0, "");
  check_shape(fn, "mhc_base", mhc_base, {input_mix.shape().back()});
}

} // namespace

HostTensor mhc_head_compute_mix_ref(const HostTensor &input_mix,
                                    const HostTensor &mhc_scale,
                                    const HostTensor &mhc_base,
                                    float mhc_pre_eps) {
  check_head_args("mhc_head_compute_mix_ref", input_mix, mhc_scale, mhc_base);
  int64_t mhc = input_mix.shape().back(),
          n = product(leading_shape(input_mix, 1));
  HostTensor out = HostTensor::zeros(DType::f32, input_mix.shape());
  const float *in = input_mix.data<float>(), *base = mhc_base.data<float>();
  float scale = mhc_scale.data<float>()[0];
  for (int64_t t = 0; t < n; ++t)
    for (int64_t j = 0; j < mhc; ++j)
      out.data<float>()[t * mhc + j] =
          sigmoid(std::fma(in[t * mhc + j], scale, base[j])) + mhc_pre_eps;
  return out;
}

MhcHeadComputeMixGrads mhc_head_compute_mix_bwd_ref(
    const HostTensor &out_grad, const HostTensor &input_mix,
    const HostTensor &mhc_scale, const HostTensor &mhc_base) {
  const char *fn = "mhc_head_compute_mix_bwd_ref";
  check_head_args(fn, input_mix, mhc_scale, mhc_base);
  check_tensor(fn, "out_grad", out_grad, DType::f32, 0, "");
  check_shape(fn, "out_grad", out_grad, input_mix.shape());
  int64_t mhc = input_mix.shape().back(),
          n = product(leading_shape(input_mix, 1));
  MhcHeadComputeMixGrads g{HostTensor::zeros(DType::f32, input_mix.shape()),
                           HostTensor::zeros(DType::f32, {1}),
                           HostTensor::zeros(DType::f32, {mhc})};
  const float *in = input_mix.data<float>(), *base = mhc_base.data<float>();
  float scale = mhc_scale.data<float>()[0];
  double scale_sum = 0;
  std::vector<double> base_sum(mhc, 0.0);
  for (int64_t t = 0; t < n; ++t)
    for (int64_t j = 0; j < mhc; ++j) {
      int64_t i = t * mhc + j;
      float s = sigmoid(std::fma(in[i], scale, base[j]));
      float gz = s * (1.0f - s) * out_grad.data<float>()[i];
      g.input_mix_grad.data<float>()[i] = gz * scale;
      scale_sum += static_cast<double>(gz) * in[i];
      base_sum[j] += gz;
    }
  g.mhc_scale_grad.data<float>()[0] = static_cast<float>(scale_sum);
  for (int64_t j = 0; j < mhc; ++j)
    g.mhc_base_grad.data<float>()[j] = static_cast<float>(base_sum[j]);
  return g;
}

} // namespace tilejit::mhc
