// expand_to_mhc_ref.cpp - CPU reference of expand_to_mhc (ExpandToMHCFn,
// spec §3.1): copy a bf16 row into mhc streams; the backward sums them.
#include "mhc/mhc_common.h"
#include "mhc/reference.h"

#include <fmt/format.h>

namespace tilejit::mhc {

using namespace detail;

HostTensor expand_to_mhc_ref(const HostTensor &hidden, int mhc_mult,
                             std::optional<HostTensor> out) {
  const char *fn = "expand_to_mhc_ref";
  check_tensor(fn, "hidden", hidden, DType::bf16, 1, "(..., H)");
  if (mhc_mult < 1)
    fail_value(fn, "mhc_mult", fmt::format("{}", mhc_mult), ">= 1");
  int64_t hid = hidden.shape().back();
  std::vector<int64_t> lead = leading_shape(hidden, 1);
  std::vector<int64_t> out_shape = with_tail(lead, {mhc_mult, hid});
  if (out) {
    check_tensor(fn, "out", *out, DType::bf16, 0, "");
    check_shape(fn, "out", *out, out_shape);
  } else {
    out = HostTensor::zeros(DType::bf16, out_shape);
  }
  const uint16_t *x = hidden.data<uint16_t>();
  uint16_t *o = out->data<uint16_t>();
  int64_t n = product(lead);
  for (int64_t t = 0; t < n; ++t)
    for (int m = 0; m < mhc_mult; ++m)
      for (int64_t h = 0; h < hid; ++h)
        o[(t * mhc_mult + m) * hid + h] = x[t * hid + h];
  return *out;
}

HostTensor expand_to_mhc_bwd_ref(const HostTensor &out_grad) {
  const char *fn = "expand_to_mhc_bwd_ref";
  check_tensor(fn, "out_grad", out_grad, DType::bf16, 2, "(..., mhc, H)");
  int64_t mhc = out_grad.shape().end()[-2], hid = out_grad.shape().back();
  std::vector<int64_t> lead = leading_shape(out_grad, 2);
  HostTensor x_grad = HostTensor::zeros(DType::bf16, with_tail(lead, {hid}));
  const uint16_t *g = out_grad.data<uint16_t>();
  uint16_t *xg = x_grad.data<uint16_t>();
  int64_t n = product(lead);
  for (int64_t t = 0; t < n; ++t)
    for (int64_t h = 0; h < hid; ++h) {
      float acc = 0.0f;
      for (int64_t m = 0; m < mhc; ++m)
        acc += bf16_value(g[(t * mhc + m) * hid + h]);
      xg[t * hid + h] = bf16_bits(acc);
    }
  return x_grad;
}

} // namespace tilejit::mhc
