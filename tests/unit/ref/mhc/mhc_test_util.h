// mhc_test_util.h - Helpers of the mHC reference tests: seeded inputs,
// tensors from doubles, float64 forwards of every op (no rounding anywhere)
// and a central finite-difference check of a gradient.
#pragma once

#include "common/convert.h"
#include "common/host_tensor.h"
#include "tilejit/error.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

/// One deliberate mistake: `expr` throws UserError with exactly `msg`.
#define CHECK_USER_ERROR(expr, msg)                                            \
  do {                                                                         \
    CHECK_THROWS_AS(expr, tilejit::UserError);                                 \
    CHECK_THROWS_WITH(expr, msg);                                              \
  } while (0)

namespace mhc_test {

using tilejit::DType;
using tilejit::ref::HostTensor;
using Vec = std::vector<double>;
using Shape = std::vector<int64_t>;

inline Vec randn(size_t n, uint32_t seed, double scale = 1.0,
                 double shift = 0.0) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> dist(0.0, 1.0);
  Vec v(n);
  for (double &x : v)
    x = dist(gen) * scale + shift;
  return v;
}

/// Rounds each value to float32 / bf16 (so the double vector can be reused
/// as the exact value of the tensor).
inline Vec to_f32(Vec v) {
  for (double &x : v)
    x = static_cast<float>(x);
  return v;
}
inline Vec to_bf16(Vec v) {
  for (double &x : v)
    x = tilejit::ref::bf16_to_f32(
        tilejit::ref::f32_to_bf16(static_cast<float>(x)));
  return v;
}
/// TF32 values (10 explicit mantissa bits), so the references' rounding of
/// fn is the identity.
inline Vec to_tf32(Vec v) {
  for (double &x : v) {
    uint32_t b = tilejit::ref::f32_to_bits(static_cast<float>(x));
    x = tilejit::ref::bits_to_f32(b & ~0x1FFFu);
  }
  return v;
}

inline HostTensor f32(const Shape &shape, const Vec &v) {
  HostTensor t = HostTensor::zeros(DType::f32, shape);
  REQUIRE(static_cast<int64_t>(v.size()) == t.numel());
  for (size_t i = 0; i < v.size(); ++i)
    t.data<float>()[i] = static_cast<float>(v[i]);
  return t;
}
inline HostTensor bf16(const Shape &shape, const Vec &v) {
  HostTensor t = HostTensor::zeros(DType::bf16, shape);
  REQUIRE(static_cast<int64_t>(v.size()) == t.numel());
  for (size_t i = 0; i < v.size(); ++i)
    t.data<uint16_t>()[i] = tilejit::ref::f32_to_bf16(static_cast<float>(v[i]));
  return t;
}
/// Elements of a contiguous f32 or bf16 tensor as doubles.
inline Vec values(const HostTensor &t) {
  REQUIRE(t.is_contiguous());
  Vec v(t.numel());
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = t.dtype() == DType::bf16
               ? tilejit::ref::bf16_to_f32(t.data<uint16_t>()[i])
               : t.data<float>()[i];
  return v;
}
inline float bf16_of(double v) {
  return tilejit::ref::bf16_to_f32(
      tilejit::ref::f32_to_bf16(static_cast<float>(v)));
}

inline double dot(const Vec &a, const Vec &b) {
  REQUIRE(a.size() == b.size());
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i)
    s += a[i] * b[i];
  return s;
}

inline double max_abs(const Vec &v) {
  double m = 0;
  for (double x : v)
    m = std::max(m, std::abs(x));
  return m;
}

/// Compares `grad` with central differences (f(x+h)-f(x-h))/2h of `f` at
/// `x`, entry by entry: |grad - fd| <= rtol*|fd| + atol_frac*max|fd|.
inline void check_gradient(const std::string &what, const Vec &x,
                           const std::function<double(const Vec &)> &f,
                           const Vec &grad, double rtol, double atol_frac,
                           double h = 1e-6) {
  REQUIRE(grad.size() == x.size());
  Vec fd(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    double step = h * std::max(1.0, std::abs(x[i]));
    Vec xp = x, xm = x;
    xp[i] += step;
    xm[i] -= step;
    fd[i] = (f(xp) - f(xm)) / (2 * step);
  }
  double atol = atol_frac * max_abs(fd);
  size_t worst = 0, bad = 0;
  double worst_excess = -1e300;
  for (size_t i = 0; i < x.size(); ++i) {
    double excess = std::abs(grad[i] - fd[i]) - (rtol * std::abs(fd[i]) + atol);
    if (excess > 0)
      ++bad;
    if (excess > worst_excess) {
      worst_excess = excess;
      worst = i;
    }
  }
  INFO(what << ": " << bad << " of " << x.size() << " entries off; worst at "
            << worst << ": grad " << (x.empty() ? 0 : grad[worst])
            << " vs finite difference " << (x.empty() ? 0 : fd[worst])
            << " (max |fd| " << max_abs(fd) << ")");
  CHECK(bad == 0);
  // A gradient check is only meaningful when something flows.
  CHECK((x.empty() || max_abs(fd) > 0));
}

// --- float64 forwards (spec formulas, no rounding) ---------------------------

inline double sigmoid64(double z) { return 1.0 / (1.0 + std::exp(-z)); }

/// B matrices n x n, row-major.
inline Vec sinkhorn64(const Vec &x, int n, int repeat, double eps) {
  Vec y(x.size());
  size_t batch = n == 0 ? 0 : x.size() / (n * n);
  for (size_t b = 0; b < batch; ++b) {
    const double *xm = x.data() + b * n * n;
    double *ym = y.data() + b * n * n;
    for (int i = 0; i < n; ++i) {
      double mx = *std::max_element(xm + i * n, xm + i * n + n), s = 0;
      for (int j = 0; j < n; ++j)
        s += std::exp(xm[i * n + j] - mx);
      for (int j = 0; j < n; ++j)
        ym[i * n + j] = std::exp(xm[i * n + j] - mx) / s + eps;
    }
    auto cols = [&] {
      for (int j = 0; j < n; ++j) {
        double s = 0;
        for (int i = 0; i < n; ++i)
          s += ym[i * n + j];
        for (int i = 0; i < n; ++i)
          ym[i * n + j] /= s + eps;
      }
    };
    auto rows = [&] {
      for (int i = 0; i < n; ++i) {
        double s = 0;
        for (int j = 0; j < n; ++j)
          s += ym[i * n + j];
        for (int j = 0; j < n; ++j)
          ym[i * n + j] /= s + eps;
      }
    };
    cols();
    for (int r = 1; r < repeat; ++r) {
      rows();
      cols();
    }
  }
  return y;
}

/// out[t, j] = (x[t] . fn[j]) / sqrt(|x[t]|^2 / kd + eps); x is (n, kd).
inline Vec norm_fn64(const Vec &x, const Vec &fn, int64_t n, int64_t kd,
                     int mhc3, double eps) {
  Vec out(n * mhc3);
  for (int64_t t = 0; t < n; ++t) {
    double sq = 0;
    for (int64_t k = 0; k < kd; ++k)
      sq += x[t * kd + k] * x[t * kd + k];
    double rms = 1.0 / std::sqrt(sq / kd + eps);
    for (int j = 0; j < mhc3; ++j) {
      double m = 0;
      for (int64_t k = 0; k < kd; ++k)
        m += x[t * kd + k] * fn[j * kd + k];
      out[t * mhc3 + j] = m * rms;
    }
  }
  return out;
}

struct Split64 {
  Vec pre, post, comb;
};
inline Split64 split64(const Vec &in, const Vec &scale, const Vec &base,
                       int mhc, double post_mult, double pre_eps) {
  int mhc3 = mhc * (mhc + 2);
  size_t n = in.size() / mhc3;
  Split64 s{Vec(n * mhc), Vec(n * mhc), Vec(n * mhc * mhc)};
  for (size_t t = 0; t < n; ++t) {
    const double *it = in.data() + t * mhc3;
    for (int m = 0; m < mhc; ++m) {
      s.pre[t * mhc + m] = sigmoid64(it[m] * scale[0] + base[m]) + pre_eps;
      s.post[t * mhc + m] =
          sigmoid64(it[mhc + m] * scale[1] + base[mhc + m]) * post_mult;
    }
    for (int q = 0; q < mhc * mhc; ++q)
      s.comb[t * mhc * mhc + q] =
          it[2 * mhc + q] * scale[2] + base[2 * mhc + q];
  }
  return s;
}

/// out[t, h] = sum_m mix[t, m] x[t, m, h].
inline Vec apply64(const Vec &x, const Vec &mix, int64_t n, int mhc,
                   int64_t hid) {
  Vec out(n * hid, 0.0);
  for (int64_t t = 0; t < n; ++t)
    for (int m = 0; m < mhc; ++m)
      for (int64_t h = 0; h < hid; ++h)
        out[t * hid + h] += mix[t * mhc + m] * x[(t * mhc + m) * hid + h];
  return out;
}

/// out[t, o, h] = post[t, o] y[t, h] + sum_i comb[t, i, o] res[t, i, h].
inline Vec post64(const Vec &y, const Vec &res, const Vec &post,
                  const Vec &comb, int64_t n, int mhc, int64_t hid) {
  Vec out(n * mhc * hid);
  for (int64_t t = 0; t < n; ++t)
    for (int o = 0; o < mhc; ++o)
      for (int64_t h = 0; h < hid; ++h) {
        double acc = post[t * mhc + o] * y[t * hid + h];
        for (int i = 0; i < mhc; ++i)
          acc += comb[(t * mhc + i) * mhc + o] * res[(t * mhc + i) * hid + h];
        out[(t * mhc + o) * hid + h] = acc;
      }
  return out;
}

/// sigmoid(in * scale + base[j]) + eps over (n, mhc).
inline Vec head_mix64(const Vec &in, double scale, const Vec &base,
                      double eps) {
  Vec out(in.size());
  size_t mhc = base.size();
  for (size_t i = 0; i < in.size(); ++i)
    out[i] = sigmoid64(in[i] * scale + base[i % mhc]) + eps;
  return out;
}

/// Same bits (NaN payloads included) of two f32 values.
inline bool same_bits(float a, float b) {
  return tilejit::ref::f32_to_bits(a) == tilejit::ref::f32_to_bits(b);
}

} // namespace mhc_test
