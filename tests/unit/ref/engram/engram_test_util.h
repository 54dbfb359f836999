// engram_test_util.h - Test helpers for the Engram references: seeded bf16
// tensors, a float64 forward of the gate written from the spec's formula,
// and central finite differences.
#pragma once

#include "common/convert.h"
#include "common/host_tensor.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace engram_test {

using tilejit::DType;
using tilejit::ref::HostTensor;

/// A contiguous bf16 tensor holding `values` rounded to bf16.
inline HostTensor bf16_tensor(const std::vector<int64_t> &shape,
                              const std::vector<double> &values) {
  std::vector<uint16_t> bits(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    bits[i] = tilejit::ref::f32_to_bf16(static_cast<float>(values[i]));
  return HostTensor::from(DType::bf16, shape, bits);
}

inline HostTensor f32_tensor(const std::vector<int64_t> &shape,
                             const std::vector<double> &values) {
  std::vector<float> f(values.begin(), values.end());
  return HostTensor::from(DType::f32, shape, f);
}

inline int64_t numel(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

inline std::vector<double> randn(int64_t n, std::mt19937 &rng,
                                 double scale = 1.0) {
  std::normal_distribution<double> dist(0.0, scale);
  std::vector<double> v(n);
  for (double &x : v)
    x = dist(rng);
  return v;
}

inline HostTensor randn_bf16(const std::vector<int64_t> &shape,
                             std::mt19937 &rng, double scale = 1.0) {
  return bf16_tensor(shape, randn(numel(shape), rng, scale));
}

inline HostTensor randn_f32(const std::vector<int64_t> &shape,
                            std::mt19937 &rng, double scale = 1.0) {
  return f32_tensor(shape, randn(numel(shape), rng, scale));
}

/// All elements in row-major order of the shape (any strides), as double.
inline std::vector<double> values(const HostTensor &t) {
  std::vector<double> out;
  out.reserve(t.numel());
  if (t.numel() == 0)
    return out;
  std::vector<int64_t> index(t.rank(), 0);
  while (true) {
    out.push_back(tilejit::ref::element_as_double(t, index));
    int d = t.rank() - 1;
    while (d >= 0 && ++index[d] == t.size(d))
      index[d--] = 0;
    if (d < 0)
      return out;
  }
}

/// The gate written as the spec states its meaning (§2.3):
///   out = x + sigmoid(signed_sqrt(<RMSNorm(x) * wh, RMSNorm(k) * we> /
///   sqrt(D))) * v, signed_sqrt(z) = sign(z) * sqrt(max(|z|, clamp)),
/// with z == 0 counted as positive (the kernel's copysign). All in double,
/// no rounding of the output. Row-major x, k (T, hc, D), v (T, D), wh, we
/// (hc, D); for the op-level tests wh = weight_fused and we = 1.
struct GateF64 {
  int64_t T = 0, hc = 0, D = 0;
  std::vector<double> x, k, v, wh, we;
  double eps = 1e-20, clamp = 1e-6;

  double rstd(const std::vector<double> &a, int64_t t, int64_t h) const {
    double sum = 0;
    for (int64_t d = 0; d < D; ++d)
      sum += a[(t * hc + h) * D + d] * a[(t * hc + h) * D + d];
    return 1 / std::sqrt(sum / D + eps);
  }
  double score(int64_t t, int64_t h) const {
    double rx = rstd(x, t, h), rk = rstd(k, t, h), dot = 0;
    for (int64_t d = 0; d < D; ++d) {
      double xn = x[(t * hc + h) * D + d] * rx * wh[h * D + d];
      double kn = k[(t * hc + h) * D + d] * rk * we[h * D + d];
      dot += xn * kn;
    }
    return dot / std::sqrt(static_cast<double>(D));
  }
  double gate(int64_t t, int64_t h) const {
    double z = score(t, h);
    double r = std::sqrt(std::max(std::fabs(z), clamp));
    return 1 / (1 + std::exp(z < 0 ? r : -r));
  }
  std::vector<double> out() const {
    std::vector<double> o(T * hc * D);
    for (int64_t t = 0; t < T; ++t)
      for (int64_t h = 0; h < hc; ++h) {
        double g = gate(t, h);
        for (int64_t d = 0; d < D; ++d)
          o[(t * hc + h) * D + d] = x[(t * hc + h) * D + d] + g * v[t * D + d];
      }
    return o;
  }
  /// L = sum(grad_out * out).
  double loss(const std::vector<double> &grad_out) const {
    std::vector<double> o = out();
    double l = 0;
    for (size_t i = 0; i < o.size(); ++i)
      l += grad_out[i] * o[i];
    return l;
  }
};

/// Central differences of `loss` with respect to every entry of `vals`.
template <class Loss>
std::vector<double> finite_diff(std::vector<double> &vals, Loss &&loss,
                                double h = 1e-6) {
  std::vector<double> grad(vals.size());
  for (size_t i = 0; i < vals.size(); ++i) {
    const double saved = vals[i], step = h * std::max(1.0, std::fabs(saved));
    vals[i] = saved + step;
    double up = loss();
    vals[i] = saved - step;
    double down = loss();
    vals[i] = saved;
    grad[i] = (up - down) / (2 * step);
  }
  return grad;
}

/// Every |got - want| <= rtol * |want| + atol; reports the first miss.
inline void check_close(const char *what, const std::vector<double> &got,
                        const std::vector<double> &want, double rtol,
                        double atol) {
  REQUIRE(got.size() == want.size());
  size_t misses = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= rtol * std::fabs(want[i]) + atol)) {
      if (misses++ == 0)
        first = i;
    }
  INFO(what << ": " << misses << " of " << got.size() << " entries differ; "
            << "first at flat index " << first << ": got "
            << (misses ? got[first] : 0.0) << ", want "
            << (misses ? want[first] : 0.0));
  CHECK(misses == 0);
}

} // namespace engram_test
