// mhc_pre_split_mixes_ref.cpp - CPU reference of mhc_pre_split_mixes
// (MHCPreSplitMixes, spec §3.4): mhc3 mixes -> pre, post and comb logits.
#include "mhc/mhc_common.h"
#include "mhc/reference.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <utility>

namespace tilejit::mhc {

using namespace detail;

namespace {

/// Checks mhc_mult, scale (3,), base (mhc3,) and returns mhc3.
int check_split_args(const char *fn, const HostTensor &input_mixes,
                     const HostTensor &mhc_scale, const HostTensor &mhc_base,
                     int mhc_mult) {
  if (mhc_mult < 1)
    fail_value(fn, "mhc_mult", fmt::format("{}", mhc_mult), ">= 1");
  int mhc3 = mhc_mult * (mhc_mult + 2);
  check_tensor(fn, "input_mixes", input_mixes, DType::f32, 1,
               fmt::format("(..., {})", mhc3));
  if (input_mixes.shape().back() != mhc3)
    fail_shape(fn, "input_mixes", input_mixes,
               fmt::format("(..., {}) = (..., mhc_mult*(mhc_mult+2))", mhc3));
  check_tensor(fn, "mhc_scale", mhc_scale, DType::f32, 0, "");
  check_shape(fn, "mhc_scale", mhc_scale, {3});
  check_tensor(fn, "mhc_base", mhc_base, DType::f32, 0, "");
  check_shape(fn, "mhc_base", mhc_base, {mhc3});
  return mhc3;
}

} // namespace

MhcSplitMixes mhc_pre_split_mixes_ref(const HostTensor &input_mixes,
                                      const HostTensor &mhc_scale,
                                      const HostTensor &mhc_base, int mhc_mult,
                                      float mhc_post_mult_value,
                                      float mhc_pre_eps) {
  const char *fn = "mhc_pre_split_mixes_ref";
  int mhc3 = check_split_args(fn, input_mixes, mhc_scale, mhc_base, mhc_mult);
  int mhc = mhc_mult;
  std::vector<int64_t> lead = leading_shape(input_mixes, 1);
  MhcSplitMixes r{HostTensor::zeros(DType::f32, with_tail(lead, {mhc, 1})),
                  HostTensor::zeros(DType::f32, with_tail(lead, {mhc, 1})),
                  HostTensor::zeros(DType::f32, with_tail(lead, {mhc, mhc}))};
  int64_t n = product(lead);
  for (int64_t t = 0; t < n; ++t)
    split_mixes_token(
        input_mixes.data<float>() + t * mhc3, mhc_scale.data<float>(),
        mhc_base.data<float>(), mhc, mhc_post_mult_value, mhc_pre_eps,
        r.pre_mix.data<float>() + t * mhc, r.post_mix.data<float>() + t * mhc,
        r.comb_mix.data<float>() + t * mhc * mhc);
  return r;
}

MhcSplitMixesGrads mhc_pre_split_mixes_bwd_ref(
    const HostTensor &pre_mix_grad, const HostTensor &post_mix_grad,
    const HostTensor &comb_mix_grad, const HostTensor &input_mixes,
    const HostTensor &post_mix, const HostTensor &mhc_scale,
    const HostTensor &mhc_base, int mhc_mult, float mhc_post_mult_value) {
  const char *fn = "mhc_pre_split_mixes_bwd_ref";
  int mhc3 = check_split_args(fn, input_mixes, mhc_scale, mhc_base, mhc_mult);
  int mhc = mhc_mult;
  std::vector<int64_t> lead = leading_shape(input_mixes, 1);
  std::vector<int64_t> col = with_tail(lead, {mhc, 1});
  for (auto [arg, t] : {std::pair{"pre_mix_grad", &pre_mix_grad},
                        std::pair{"post_mix_grad", &post_mix_grad},
                        std::pair{"post_mix", &post_mix}}) {
    check_tensor(fn, arg, *t, DType::f32, 0, "");
    check_shape(fn, arg, *t, col);
  }
  check_tensor(fn, "comb_mix_grad", comb_mix_grad, DType::f32, 0, "");
  check_shape(fn, "comb_mix_grad", comb_mix_grad, with_tail(lead, {mhc, mhc}));

  MhcSplitMixesGrads g{HostTensor::zeros(DType::f32, input_mixes.shape()),
                       HostTensor::zeros(DType::f32, {3}),
                       HostTensor::zeros(DType::f32, {mhc3})};
  const float *in = input_mixes.data<float>(), *sc = mhc_scale.data<float>();
  const float *base = mhc_base.data<float>();
  std::vector<double> scale_sum(3, 0.0), base_sum(mhc3, 0.0);
  std::vector<float> gz(mhc3);
  int64_t n = product(lead);
  for (int64_t t = 0; t < n; ++t) {
    const float *it = in + t * mhc3;
    for (int m = 0; m < mhc; ++m) {
      float s = sigmoid(std::fma(it[m], sc[0], base[m]));
      gz[m] = pre_mix_grad.data<float>()[t * mhc + m] * s * (1.0f - s);
      float p = post_mix.data<float>()[t * mhc + m];
      float dp = post_mix_grad.data<float>()[t * mhc + m];
      // Choice: post_mult = 0 makes post identically 0; its gradient is 0
      // (the spec's p*(1 - p/post_mult) would be 0/0 = NaN).
      gz[mhc + m] = mhc_post_mult_value == 0.0f
                        ? 0.0f
                        : dp * p * (1.0f - p / mhc_post_mult_value);
    }
    for (int q = 0; q < mhc * mhc; ++q)
      gz[2 * mhc + q] = comb_mix_grad.data<float>()[t * mhc * mhc + q];
    for (int j = 0; j < mhc3; ++j) {
      int c = std::min(2, j / mhc);
      g.input_mixes_grad.data<float>()[t * mhc3 + j] = gz[j] * sc[c];
      base_sum[j] += gz[j];
      scale_sum[c] += static_cast<double>(gz[j]) * it[j];
    }
  }
  for (int c = 0; c < 3; ++c)
    g.mhc_scale_grad.data<float>()[c] = static_cast<float>(scale_sum[c]);
  for (int j = 0; j < mhc3; ++j)
    g.mhc_base_grad.data<float>()[j] = static_cast<float>(base_sum[j]);
  return g;
}

} // namespace tilejit::mhc
