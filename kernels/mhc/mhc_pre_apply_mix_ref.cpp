// mhc_pre_apply_mix_ref.cpp - CPU reference of mhc_pre_apply_mix
// (MHCPreApplyMix, spec §3.5): the layer input as a mix of the streams.
#include "mhc/mhc_common.h"
#include "mhc/reference.h"

#include <cmath>

namespace tilejit::mhc {

using namespace detail;

namespace {

/// Checks x (..., mhc, H) bf16 and mix (..., mhc, 1) fp32.
void check_x_mix(const char *fn, const HostTensor &x, const HostTensor &mix) {
  check_tensor(fn, "x", x, DType::bf16, 2, "(..., mhc, H)");
  std::vector<int64_t> want = x.shape();
  want.back() = 1;
  check_tensor(fn, "mix", mix, DType::f32, 0, "");
  check_shape(fn, "mix", mix, want);
}

} // namespace

HostTensor mhc_pre_apply_mix_ref(const HostTensor &x, const HostTensor &mix,
                                 std::optional<HostTensor> out) {
  const char *fn = "mhc_pre_apply_mix_ref";
  check_x_mix(fn, x, mix);
  int mhc = static_cast<int>(x.shape().end()[-2]);
  int64_t hid = x.shape().back();
  std::vector<int64_t> lead = leading_shape(x, 2);
  std::vector<int64_t> out_shape = with_tail(lead, {hid});
  if (out) {
    check_tensor(fn, "out", *out, DType::bf16, 0, "");
    check_shape(fn, "out", *out, out_shape);
  } else {
    out = HostTensor::zeros(DType::bf16, out_shape);
  }
  const uint16_t *xv = x.data<uint16_t>();
  int64_t n = product(lead);
  std::vector<float> col(mhc);
  for (int64_t t = 0; t < n; ++t)
    for (int64_t h = 0; h < hid; ++h) {
      for (int m = 0; m < mhc; ++m)
        col[m] = bf16_value(xv[(t * mhc + m) * hid + h]);
      float acc = apply_mix_chain(mix.data<float>() + t * mhc, col.data(), mhc);
      out->data<uint16_t>()[t * hid + h] = bf16_bits(acc);
    }
  return *out;
}

MhcPreApplyMixGrads
mhc_pre_apply_mix_bwd_ref(const HostTensor &out_grad, const HostTensor &x,
                          const HostTensor &mix,
                          std::optional<HostTensor> x_grad_buf) {
  const char *fn = "mhc_pre_apply_mix_bwd_ref";
  check_x_mix(fn, x, mix);
  int mhc = static_cast<int>(x.shape().end()[-2]);
  int64_t hid = x.shape().back();
  std::vector<int64_t> lead = leading_shape(x, 2);
  check_tensor(fn, "out_grad", out_grad, DType::bf16, 0, "");
  check_shape(fn, "out_grad", out_grad, with_tail(lead, {hid}));
  bool fused = x_grad_buf.has_value();
  if (fused) {
    check_tensor(fn, "x_grad_buf", *x_grad_buf, DType::bf16, 0, "");
    check_shape(fn, "x_grad_buf", *x_grad_buf, x.shape());
  } else {
    x_grad_buf = HostTensor::zeros(DType::bf16, x.shape());
  }
  HostTensor mix_grad = HostTensor::zeros(DType::f32, mix.shape());
  const uint16_t *xv = x.data<uint16_t>(), *og = out_grad.data<uint16_t>();
  uint16_t *xg = x_grad_buf->data<uint16_t>();
  int64_t n = product(lead);
  for (int64_t t = 0; t < n; ++t)
    for (int m = 0; m < mhc; ++m) {
      float mx = mix.data<float>()[t * mhc + m];
      double acc = 0;
      for (int64_t h = 0; h < hid; ++h) {
        int64_t i = (t * mhc + m) * hid + h;
        float g = bf16_value(og[t * hid + h]);
        acc += static_cast<double>(g) * bf16_value(xv[i]);
        xg[i] = bf16_bits(std::fma(mx, g, bf16_value(xg[i])));
      }
      mix_grad.data<float>()[t * mhc + m] = static_cast<float>(acc);
    }
  if (fused)
    return {std::nullopt, mix_grad};
  return {*x_grad_buf, mix_grad};
}

} // namespace tilejit::mhc
