// mhc_post_ref.cpp - CPU reference of mhc_post (MHCPost, spec §3.6): the new
// residual streams from the layer output and the old streams.
#include "mhc/mhc_common.h"
#include "mhc/reference.h"

#include "tilejit/error.h"

#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tilejit::mhc {

using namespace detail;

namespace {

/// Checks the four inputs against residual (..., mhc, H).
void check_post_args(const char *fn, const HostTensor &x,
                     const HostTensor &residual, const HostTensor &post,
                     const HostTensor &comb) {
  check_tensor(fn, "residual", residual, DType::bf16, 2, "(..., mhc, H)");
  int64_t mhc = residual.shape().end()[-2], hid = residual.shape().back();
  std::vector<int64_t> lead = leading_shape(residual, 2);
  check_tensor(fn, "x", x, DType::bf16, 0, "");
  check_shape(fn, "x", x, with_tail(lead, {hid}));
  check_tensor(fn, "post_layer_mix", post, DType::f32, 0, "");
  check_shape(fn, "post_layer_mix", post, with_tail(lead, {mhc, 1}));
  check_tensor(fn, "comb_res_mix", comb, DType::f32, 0, "");
  check_shape(fn, "comb_res_mix", comb, with_tail(lead, {mhc, mhc}));
}

} // namespace

HostTensor mhc_post_ref(const HostTensor &x, const HostTensor &residual,
                        const HostTensor &post_layer_mix,
                        const HostTensor &comb_res_mix,
                        std::optional<HostTensor> out) {
  const char *fn = "mhc_post_ref";
  check_post_args(fn, x, residual, post_layer_mix, comb_res_mix);
  if (out) {
    check_tensor(fn, "out", *out, DType::bf16, 0, "");
    check_shape(fn, "out", *out, residual.shape());
  } else {
    out = HostTensor::zeros(DType::bf16, residual.shape());
  }
  int mhc = static_cast<int>(residual.shape().end()[-2]);
  int64_t hid = residual.shape().back();
  int64_t n = product(leading_shape(residual, 2));
  const uint16_t *xv = x.data<uint16_t>(), *rv = residual.data<uint16_t>();
  std::vector<float> res(mhc);
  for (int64_t t = 0; t < n; ++t) {
    const float *post = post_layer_mix.data<float>() + t * mhc;
    const float *comb = comb_res_mix.data<float>() + t * mhc * mhc;
    for (int64_t h = 0; h < hid; ++h) {
      for (int i = 0; i < mhc; ++i)
        res[i] = bf16_value(rv[(t * mhc + i) * hid + h]);
      float y = bf16_value(xv[t * hid + h]);
      for (int o = 0; o < mhc; ++o)
        out->data<uint16_t>()[(t * mhc + o) * hid + h] =
            bf16_bits(post_chain(post[o], y, comb, res.data(), mhc, o));
    }
  }
  return *out;
}

MhcPostGrads mhc_post_bwd_ref(const HostTensor &out_grad, const HostTensor &x,
                              const HostTensor &residual,
                              const HostTensor &post_layer_mix,
                              const HostTensor &comb_res_mix) {
  const char *fn = "mhc_post_bwd_ref";
  check_post_args(fn, x, residual, post_layer_mix, comb_res_mix);
  int64_t mhc64 = residual.shape().end()[-2];
  if (mhc64 != 4)
    throw UserError(fmt::format("{}: argument 'residual' has shape [{}] (mhc "
                                "= {}); requires mhc == 4",
                                fn, fmt::join(residual.shape(), ", "), mhc64));
  check_tensor(fn, "out_grad", out_grad, DType::bf16, 0, "");
  check_shape(fn, "out_grad", out_grad, residual.shape());
  const int mhc = 4;
  int64_t hid = residual.shape().back();
  std::vector<int64_t> lead = leading_shape(residual, 2);
  MhcPostGrads g{HostTensor::zeros(DType::bf16, x.shape()),
                 HostTensor::zeros(DType::bf16, residual.shape()),
                 HostTensor::zeros(DType::f32, post_layer_mix.shape()),
                 HostTensor::zeros(DType::f32, comb_res_mix.shape())};
  const uint16_t *xv = x.data<uint16_t>(), *rv = residual.data<uint16_t>();
  const uint16_t *dov = out_grad.data<uint16_t>();
  int64_t n = product(lead);
  for (int64_t t = 0; t < n; ++t) {
    const float *post = post_layer_mix.data<float>() + t * mhc;
    const float *comb = comb_res_mix.data<float>() + t * mhc * mhc;
    double d_post[mhc] = {}, d_comb[mhc * mhc] = {};
    for (int64_t h = 0; h < hid; ++h) {
      float d_o[mhc], res[mhc];
      for (int o = 0; o < mhc; ++o) {
        d_o[o] = bf16_value(dov[(t * mhc + o) * hid + h]);
        res[o] = bf16_value(rv[(t * mhc + o) * hid + h]);
      }
      float xh = bf16_value(xv[t * hid + h]);
      float dx = 0.0f;
      for (int o = 0; o < mhc; ++o) {
        dx = std::fma(post[o], d_o[o], dx);
        d_post[o] += static_cast<double>(xh) * d_o[o];
      }
      g.x_grad.data<uint16_t>()[t * hid + h] = bf16_bits(dx);
      for (int i = 0; i < mhc; ++i) {
        float dr = 0.0f;
        for (int o = 0; o < mhc; ++o) {
          dr = std::fma(comb[i * mhc + o], d_o[o], dr);
          d_comb[i * mhc + o] += static_cast<double>(res[i]) * d_o[o];
        }
        g.residual_grad.data<uint16_t>()[(t * mhc + i) * hid + h] =
            bf16_bits(dr);
      }
    }
    for (int o = 0; o < mhc; ++o)
      g.post_layer_mix_grad.data<float>()[t * mhc + o] =
          static_cast<float>(d_post[o]);
    for (int q = 0; q < mhc * mhc; ++q)
      g.comb_res_mix_grad.data<float>()[t * mhc * mhc + q] =
          static_cast<float>(d_comb[q]);
  }
  return g;
}

} // namespace tilejit::mhc
