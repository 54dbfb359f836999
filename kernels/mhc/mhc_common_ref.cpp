// mhc_common_ref.cpp - Argument checks and the shared per-token arithmetic of
// the mHC references (see mhc_common.h).
#include "mhc/mhc_common.h"

#include "common/convert.h"
#include "common/cuda_math.h"
#include "tilejit/error.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tilejit::mhc::detail {

void fail_value(std::string_view fn, std::string_view arg,
                std::string_view value, std::string_view rule) {
  throw UserError(fmt::format("{}: argument '{}' is {}; requires {}", fn, arg,
                              value, rule));
}

void fail_shape(std::string_view fn, std::string_view arg, const HostTensor &t,
                std::string_view layout) {
  throw UserError(fmt::format("{}: argument '{}' has shape [{}]; requires "
                              "shape {}",
                              fn, arg, fmt::join(t.shape(), ", "), layout));
}

void check_dtype(std::string_view fn, std::string_view arg, const HostTensor &t,
                 DType want) {
  if (t.dtype() != want)
    throw UserError(fmt::format("{}: argument '{}' has dtype {}; requires {}",
                                fn, arg, name_of(t.dtype()), name_of(want)));
}

void check_contiguous(std::string_view fn, std::string_view arg,
                      const HostTensor &t) {
  if (!t.is_contiguous())
    throw UserError(fmt::format("{}: argument '{}' has shape [{}] and strides "
                                "[{}]; requires a contiguous tensor",
                                fn, arg, fmt::join(t.shape(), ", "),
                                fmt::join(t.strides(), ", ")));
}

void check_tensor(std::string_view fn, std::string_view arg,
                  const HostTensor &t, DType want, int min_rank,
                  std::string_view layout) {
  check_dtype(fn, arg, t, want);
  if (t.rank() < min_rank)
    fail_shape(fn, arg, t, layout);
  check_contiguous(fn, arg, t);
}

void check_shape(std::string_view fn, std::string_view arg, const HostTensor &t,
                 std::span<const int64_t> want) {
  if (!std::equal(t.shape().begin(), t.shape().end(), want.begin(), want.end()))
    throw UserError(fmt::format("{}: argument '{}' has shape [{}]; requires "
                                "[{}]",
                                fn, arg, fmt::join(t.shape(), ", "),
                                fmt::join(want, ", ")));
}

void check_shape(std::string_view fn, std::string_view arg, const HostTensor &t,
                 std::initializer_list<int64_t> want) {
  check_shape(fn, arg, t, std::span<const int64_t>(want.begin(), want.size()));
}

ResidualDims check_mhc_residual(std::string_view fn,
                                const HostTensor &residual) {
  check_tensor(fn, "residual", residual, DType::bf16, 2, "(..., mhc, H)");
  int64_t mhc = residual.shape().end()[-2], hid = residual.shape().back();
  // The original's projection kernel stores only the first 24 columns of a
  // 32-wide tile, so mhc * (mhc + 2) <= 24.
  if (mhc < 1 || mhc > 4)
    throw UserError(fmt::format("{}: argument 'residual' has shape [{}] (mhc "
                                "= {}); requires 1 <= mhc <= 4",
                                fn, fmt::join(residual.shape(), ", "), mhc));
  // Choice: H = 0 would divide 0 by 0 in sq / (mhc*H); rejected.
  if (hid < 1)
    throw UserError(fmt::format("{}: argument 'residual' has shape [{}] (H = "
                                "0); requires H >= 1",
                                fn, fmt::join(residual.shape(), ", ")));
  int m = static_cast<int>(mhc);
  return {product(leading_shape(residual, 2)), m, m * (m + 2), mhc * hid};
}

std::vector<int64_t> leading_shape(const HostTensor &t, int trailing) {
  const std::vector<int64_t> &s = t.shape();
  return std::vector<int64_t>(s.begin(), s.end() - trailing);
}

int64_t product(std::span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

std::vector<int64_t> with_tail(std::vector<int64_t> lead,
                               std::initializer_list<int64_t> tail) {
  lead.insert(lead.end(), tail.begin(), tail.end());
  return lead;
}

float bf16_value(uint16_t bits) { return ref::bf16_to_f32(bits); }
uint16_t bf16_bits(float v) { return ref::f32_to_bf16(v); }

float round_to_tf32(float v) {
  // Choice: the original's bit trick would turn a NaN whose payload carries
  // into the sign bit into a number; a NaN stays a NaN here.
  if (std::isnan(v))
    return v;
  uint32_t bits = ref::f32_to_bits(v);
  bits = (bits + 0x1000u) & ~0x1FFFu;
  return ref::bits_to_f32(bits);
}

float sigmoid(float z) { return 1.0f / (1.0f + ref::cuda_expf(-z)); }

float norm_rms(float sq, int64_t kd, float eps) {
  float v = sq / static_cast<float>(kd) + eps;
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(v)));
}

float apply_mix_chain(const float *mix, const float *x, int mhc) {
  float acc = 0.0f;
  for (int m = 0; m < mhc; ++m)
    acc = std::fma(mix[m], x[m], acc);
  return acc;
}

float post_chain(float post, float y, const float *comb, const float *res,
                 int mhc, int o) {
  float acc = post * y;
  for (int i = 0; i < mhc; ++i)
    acc = std::fma(comb[i * mhc + o], res[i], acc);
  return acc;
}

void norm_fn_token(const uint16_t *x, const float *fnr, int64_t kd, int mhc3,
                   float *mul, float *sq) {
  double s = 0;
  for (int64_t k = 0; k < kd; ++k) {
    double v = bf16_value(x[k]);
    s += v * v;
  }
  *sq = static_cast<float>(s);
  for (int j = 0; j < mhc3; ++j) {
    double acc = 0;
    for (int64_t k = 0; k < kd; ++k)
      acc += static_cast<double>(bf16_value(x[k])) * fnr[j * kd + k];
    mul[j] = static_cast<float>(acc);
  }
}

void split_mixes_token(const float *in, const float *scale, const float *base,
                       int mhc, float post_mult, float pre_eps, float *pre,
                       float *post, float *comb) {
  for (int m = 0; m < mhc; ++m) {
    pre[m] = sigmoid(std::fma(in[m], scale[0], base[m])) + pre_eps;
    post[m] =
        sigmoid(std::fma(in[mhc + m], scale[1], base[mhc + m])) * post_mult;
  }
  for (int q = 0; q < mhc * mhc; ++q)
    comb[q] = std::fma(in[2 * mhc + q], scale[2], base[2 * mhc + q]);
}

void sinkhorn_matrix(const float *x, float *y, int n, int repeat, float eps,
                     SinkhornTrace *trace) {
  if (trace) {
    trace->softmax.assign(n * n, 0.0f);
    trace->inputs.assign(2 * repeat, {});
    trace->sums.assign(2 * repeat, {});
  }
  for (int i = 0; i < n; ++i) {
    float mx = x[i * n];
    for (int j = 1; j < n; ++j)
      mx = std::max(mx, x[i * n + j]);
    float s = 0.0f;
    for (int j = 0; j < n; ++j) {
      y[i * n + j] = std::exp(x[i * n + j] - mx);
      s += y[i * n + j];
    }
    for (int j = 0; j < n; ++j) {
      float a0 = y[i * n + j] / s;
      if (trace)
        trace->softmax[i * n + j] = a0;
      y[i * n + j] = a0 + eps;
    }
  }
  // Step 1 normalises columns, then rows and columns alternate: 2*repeat-1
  // steps, the last one a column step.
  for (int step = 1; step < 2 * repeat; ++step) {
    bool column = step % 2 == 1;
    if (trace)
      trace->inputs[step].assign(y, y + n * n);
    std::vector<float> sums(n, 0.0f);
    for (int a = 0; a < n; ++a) {
      // a is the column (column step) or the row (row step) being scaled.
      auto at = [&](int b) -> float & {
        return column ? y[b * n + a] : y[a * n + b];
      };
      for (int b = 0; b < n; ++b)
        sums[a] += at(b);
      for (int b = 0; b < n; ++b)
        at(b) = at(b) / (sums[a] + eps);
    }
    if (trace)
      trace->sums[step] = std::move(sums);
  }
}

} // namespace tilejit::mhc::detail
