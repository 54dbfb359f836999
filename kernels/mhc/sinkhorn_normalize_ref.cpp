// sinkhorn_normalize_ref.cpp - CPU reference of sinkhorn_normalize and its
// backward (_SinkhornNormalize, spec §3.2), fp32 per matrix.
#include "mhc/mhc_common.h"
#include "mhc/reference.h"

#include <cmath>
#include <fmt/format.h>

namespace tilejit::mhc {

using namespace detail;

namespace {

/// Checks (..., n, n) fp32 and repeat; returns n. The original makes x
/// contiguous itself, so any strides are accepted (callers clone).
int64_t check_sinkhorn(const char *fn, const char *arg, const HostTensor &x,
                       int repeat) {
  check_dtype(fn, arg, x, DType::f32);
  if (x.rank() < 2 || x.shape().end()[-1] != x.shape().end()[-2])
    fail_shape(fn, arg, x, "(..., n, n)");
  // Choice: repeat = 0 would leave the backward's step walk undefined (it
  // starts at step 2*repeat-1); the forward always runs one column step.
  if (repeat < 1)
    fail_value(fn, "repeat", fmt::format("{}", repeat), ">= 1");
  return x.shape().back();
}

HostTensor contiguous(const HostTensor &t) {
  return t.is_contiguous() ? t : t.clone();
}

} // namespace

HostTensor sinkhorn_normalize_ref(const HostTensor &x_in, int repeat,
                                  float eps) {
  int64_t n = check_sinkhorn("sinkhorn_normalize_ref", "x", x_in, repeat);
  HostTensor x = contiguous(x_in);
  HostTensor y = HostTensor::zeros(DType::f32, x.shape());
  int64_t batch = n == 0 ? 0 : x.numel() / (n * n);
  for (int64_t b = 0; b < batch; ++b)
    sinkhorn_matrix(x.data<float>() + b * n * n, y.data<float>() + b * n * n,
                    static_cast<int>(n), repeat, eps);
  return y;
}

HostTensor sinkhorn_normalize_bwd_ref(const HostTensor &grad_output,
                                      const HostTensor &x_in, int repeat,
                                      float eps) {
  const char *fn = "sinkhorn_normalize_bwd_ref";
  int64_t n = check_sinkhorn(fn, "x", x_in, repeat);
  check_dtype(fn, "grad_output", grad_output, DType::f32);
  check_shape(fn, "grad_output", grad_output, x_in.shape());
  HostTensor x = contiguous(x_in), g_in = contiguous(grad_output);
  HostTensor grad = HostTensor::zeros(DType::f32, x.shape());
  int64_t batch = n == 0 ? 0 : x.numel() / (n * n);
  std::vector<float> y(n * n);
  SinkhornTrace trace;
  for (int64_t b = 0; b < batch; ++b) {
    sinkhorn_matrix(x.data<float>() + b * n * n, y.data(), static_cast<int>(n),
                    repeat, eps, &trace);
    float *g = grad.data<float>() + b * n * n;
    std::copy(g_in.data<float>() + b * n * n,
              g_in.data<float>() + (b + 1) * n * n, g);
    for (int step = 2 * repeat - 1; step >= 1; --step) {
      bool column = step % 2 == 1;
      const std::vector<float> &a = trace.inputs[step];
      const std::vector<float> &s = trace.sums[step];
      for (int64_t p = 0; p < n; ++p) {
        // p is the column (column step) or the row (row step).
        auto idx = [&](int64_t q) { return column ? q * n + p : p * n + q; };
        float dot = 0.0f;
        for (int64_t q = 0; q < n; ++q)
          dot = std::fma(g[idx(q)], a[idx(q)], dot);
        float u = dot / (s[p] + eps);
        for (int64_t q = 0; q < n; ++q)
          g[idx(q)] = (g[idx(q)] - u) / (s[p] + eps);
      }
    }
    // The + eps is the identity; then the row softmax backward.
    const std::vector<float> &sm = trace.softmax;
    for (int64_t i = 0; i < n; ++i) {
      float dot = 0.0f;
      for (int64_t j = 0; j < n; ++j)
        dot = std::fma(g[i * n + j], sm[i * n + j], dot);
      for (int64_t j = 0; j < n; ++j)
        g[i * n + j] = (g[i * n + j] - dot) * sm[i * n + j];
    }
  }
  return grad;
}

} // namespace tilejit::mhc
