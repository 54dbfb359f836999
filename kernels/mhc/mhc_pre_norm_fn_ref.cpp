// mhc_pre_norm_fn_ref.cpp - CPU reference of mhc_pre_norm_fn (spec §3.3):
// the RMS-normalised projection of the residual onto mhc3 mixes, with the
// norm-weight merge (_MHCFnNormwMerge), forward and backward.
#include "mhc/mhc_common.h"
#include "mhc/reference.h"

#include <cmath>
#include <cstring>
#include <fmt/format.h>

namespace tilejit::mhc {

using namespace detail;

HostTensor mhc_fn_normw_merge_ref(const HostTensor &mhc_fn,
                                  const HostTensor &mhc_norm_weight) {
  const char *fn = "mhc_fn_normw_merge_ref";
  check_tensor(fn, "mhc_fn", mhc_fn, DType::f32, 2, "(rows, K)");
  if (mhc_fn.rank() != 2)
    fail_shape(fn, "mhc_fn", mhc_fn, "(rows, K)");
  int64_t rows = mhc_fn.size(0), kd = mhc_fn.size(1);
  check_tensor(fn, "mhc_norm_weight", mhc_norm_weight, DType::f32, 1, "(K,)");
  check_shape(fn, "mhc_norm_weight", mhc_norm_weight, {kd});
  HostTensor out = HostTensor::zeros(DType::f32, {rows, kd});
  const float *f = mhc_fn.data<float>(), *w = mhc_norm_weight.data<float>();
  float *o = out.data<float>();
  for (int64_t j = 0; j < rows; ++j)
    for (int64_t k = 0; k < kd; ++k)
      o[j * kd + k] = f[j * kd + k] * w[k];
  return out;
}

MhcFnNormwMergeGrads mhc_fn_normw_merge_bwd_ref(
    const HostTensor &out_fn_grad, const HostTensor &mhc_fn,
    const HostTensor &mhc_norm_weight, std::optional<HostTensor> fn_grad_buf,
    std::optional<HostTensor> norm_weight_grad_buf) {
  const char *fn = "mhc_fn_normw_merge_bwd_ref";
  check_tensor(fn, "mhc_fn", mhc_fn, DType::f32, 2, "(rows, K)");
  if (mhc_fn.rank() != 2)
    fail_shape(fn, "mhc_fn", mhc_fn, "(rows, K)");
  int64_t rows = mhc_fn.size(0), kd = mhc_fn.size(1);
  check_tensor(fn, "out_fn_grad", out_fn_grad, DType::f32, 0, "");
  check_shape(fn, "out_fn_grad", out_fn_grad, mhc_fn.shape());
  check_tensor(fn, "mhc_norm_weight", mhc_norm_weight, DType::f32, 1, "(K,)");
  check_shape(fn, "mhc_norm_weight", mhc_norm_weight, {kd});
  if (fn_grad_buf) {
    check_tensor(fn, "fn_grad_buf", *fn_grad_buf, DType::f32, 0, "");
    check_shape(fn, "fn_grad_buf", *fn_grad_buf, mhc_fn.shape());
  } else {
    fn_grad_buf = HostTensor::zeros(DType::f32, {rows, kd});
  }
  if (norm_weight_grad_buf) {
    check_tensor(fn, "norm_weight_grad_buf", *norm_weight_grad_buf, DType::f32,
                 0, "");
    check_shape(fn, "norm_weight_grad_buf", *norm_weight_grad_buf, {kd});
  } else {
    norm_weight_grad_buf = HostTensor::zeros(DType::f32, {kd});
  }
  const float *g = out_fn_grad.data<float>(), *f = mhc_fn.data<float>();
  const float *w = mhc_norm_weight.data<float>();
  float *fg = fn_grad_buf->data<float>(),
        *wg = norm_weight_grad_buf->data<float>();
  for (int64_t k = 0; k < kd; ++k) {
    double acc = 0;
    for (int64_t j = 0; j < rows; ++j) {
      fg[j * kd + k] = std::fma(g[j * kd + k], w[k], fg[j * kd + k]);
      acc += static_cast<double>(g[j * kd + k]) * f[j * kd + k];
    }
    wg[k] += static_cast<float>(acc);
  }
  return {*fn_grad_buf, *norm_weight_grad_buf};
}

MhcPreNormFnResult
mhc_pre_norm_fn_ref(const HostTensor &residual, const HostTensor &mhc_fn,
                    const std::optional<HostTensor> &mhc_norm_weight,
                    float mhc_norm_eps, bool /*fuse_grad_acc*/, int n_splits) {
  const char *fn = "mhc_pre_norm_fn_ref";
  ResidualDims d = check_mhc_residual(fn, residual);
  check_tensor(fn, "mhc_fn", mhc_fn, DType::f32, 0, "");
  check_shape(fn, "mhc_fn", mhc_fn, {d.mhc3, d.kd});
  if (mhc_norm_weight) {
    check_tensor(fn, "mhc_norm_weight", *mhc_norm_weight, DType::f32, 0, "");
    check_shape(fn, "mhc_norm_weight", *mhc_norm_weight, {d.kd});
  }
  // The original accepts n_splits and forces it to 1 (one partial sum per
  // token), so any count >= 1 gives the same result.
  if (n_splits < 1)
    fail_value(fn, "n_splits", fmt::format("{}", n_splits), ">= 1");

  HostTensor merged = mhc_norm_weight
                          ? mhc_fn_normw_merge_ref(mhc_fn, *mhc_norm_weight)
                          : mhc_fn;
  HostTensor fnr = HostTensor::zeros(DType::f32, {d.mhc3, d.kd});
  for (int64_t i = 0; i < fnr.numel(); ++i)
    fnr.data<float>()[i] = round_to_tf32(merged.data<float>()[i]);

  std::vector<int64_t> lead = leading_shape(residual, 2);
  HostTensor out = HostTensor::zeros(DType::f32, with_tail(lead, {d.mhc3}));
  HostTensor mul = HostTensor::zeros(DType::f32, with_tail(lead, {d.mhc3}));
  HostTensor sq = HostTensor::zeros(DType::f32, lead);
  const uint16_t *x = residual.data<uint16_t>();
  for (int64_t t = 0; t < d.n; ++t) {
    float *mt = mul.data<float>() + t * d.mhc3;
    float &st = sq.data<float>()[t];
    norm_fn_token(x + t * d.kd, fnr.data<float>(), d.kd, d.mhc3, mt, &st);
    float rms = norm_rms(st, d.kd, mhc_norm_eps);
    for (int j = 0; j < d.mhc3; ++j)
      out.data<float>()[t * d.mhc3 + j] = mt[j] * rms;
  }
  return {out, fnr, mul, sq};
}

MhcPreNormFnGrads
mhc_pre_norm_fn_bwd_ref(const HostTensor &out_grad, const HostTensor &residual,
                        const HostTensor &fn_rounded, const HostTensor &mul,
                        const HostTensor &sq, float mhc_norm_eps,
                        std::optional<HostTensor> residual_grad_buf) {
  const char *fn = "mhc_pre_norm_fn_bwd_ref";
  ResidualDims d = check_mhc_residual(fn, residual);
  std::vector<int64_t> lead = leading_shape(residual, 2);
  std::vector<int64_t> mix_shape = with_tail(lead, {d.mhc3});
  check_tensor(fn, "out_grad", out_grad, DType::f32, 0, "");
  check_shape(fn, "out_grad", out_grad, mix_shape);
  check_tensor(fn, "fn_rounded", fn_rounded, DType::f32, 0, "");
  check_shape(fn, "fn_rounded", fn_rounded, {d.mhc3, d.kd});
  check_tensor(fn, "mul", mul, DType::f32, 0, "");
  check_shape(fn, "mul", mul, mix_shape);
  check_tensor(fn, "sq", sq, DType::f32, 0, "");
  check_shape(fn, "sq", sq, lead);
  bool fused = residual_grad_buf.has_value();
  if (fused) {
    check_tensor(fn, "residual_grad_buf", *residual_grad_buf, DType::bf16, 0,
                 "");
    check_shape(fn, "residual_grad_buf", *residual_grad_buf, residual.shape());
  } else {
    residual_grad_buf = HostTensor::zeros(DType::bf16, residual.shape());
  }

  const float *og = out_grad.data<float>(), *mu = mul.data<float>();
  HostTensor mul_grad = HostTensor::zeros(DType::f32, {d.n, d.mhc3});
  HostTensor sq_grad = HostTensor::zeros(DType::f32, {d.n});
  for (int64_t t = 0; t < d.n; ++t) {
    float s = sq.data<float>()[t];
    float rms = norm_rms(s, d.kd, mhc_norm_eps);
    double rg = 0;
    for (int j = 0; j < d.mhc3; ++j) {
      mul_grad.data<float>()[t * d.mhc3 + j] = og[t * d.mhc3 + j] * rms;
      rg += static_cast<double>(og[t * d.mhc3 + j]) * mu[t * d.mhc3 + j];
    }
    float denom = s + mhc_norm_eps * static_cast<float>(d.kd);
    sq_grad.data<float>()[t] = static_cast<float>(rg) * rms / denom / -2.0f;
  }
  // fn_rounded is TF32 already: rounding it again changes nothing.
  const int64_t rows[] = {d.n, d.kd};
  MhcNormFnGemmGrads g = mhc_pre_norm_fn_gemm_bwd_ref(
      mul_grad, sq_grad, residual.reinterpret(DType::bf16, rows), fn_rounded,
      residual_grad_buf->reinterpret(DType::bf16, rows));
  std::memcpy(residual_grad_buf->raw(), g.x_grad.raw(),
              static_cast<size_t>(d.n * d.kd) * sizeof(uint16_t));
  if (fused)
    return {std::nullopt, g.fn_grad};
  return {*residual_grad_buf, g.fn_grad};
}

MhcNormFnGemmGrads
mhc_pre_norm_fn_gemm_bwd_ref(const HostTensor &out_mul_grad,
                             const HostTensor &sqrsum_grad, const HostTensor &x,
                             const HostTensor &fn,
                             const std::optional<HostTensor> &x_grad) {
  const char *name = "mhc_pre_norm_fn_gemm_bwd_ref";
  check_tensor(name, "x", x, DType::bf16, 2, "");
  const int64_t n = x.size(0), kd = x.size(1);
  check_tensor(name, "fn", fn, DType::f32, 2, "");
  const int64_t mhc3 = fn.size(0);
  check_shape(name, "fn", fn, {mhc3, kd});
  check_tensor(name, "out_mul_grad", out_mul_grad, DType::f32, 2, "");
  check_shape(name, "out_mul_grad", out_mul_grad, {n, mhc3});
  check_tensor(name, "sqrsum_grad", sqrsum_grad, DType::f32, 1, "");
  check_shape(name, "sqrsum_grad", sqrsum_grad, {n});
  if (x_grad) {
    check_tensor(name, "x_grad", *x_grad, DType::bf16, 2, "");
    check_shape(name, "x_grad", *x_grad, {n, kd});
  }
  std::vector<float> mgr(static_cast<size_t>(n * mhc3)),
      fnr(static_cast<size_t>(mhc3 * kd));
  for (int64_t i = 0; i < n * mhc3; ++i)
    mgr[i] = round_to_tf32(out_mul_grad.data<float>()[i]);
  for (int64_t i = 0; i < mhc3 * kd; ++i)
    fnr[i] = round_to_tf32(fn.data<float>()[i]);
  const uint16_t *xv = x.data<uint16_t>();
  const float *sg = sqrsum_grad.data<float>();
  MhcNormFnGemmGrads g{HostTensor::zeros(DType::bf16, {n, kd}),
                       HostTensor::zeros(DType::f32, {mhc3, kd})};
  // Row by row (the sums' orders as written: fn_grad's over t ascending,
  // x_grad's over j ascending, then the squares' term), in float64.
  std::vector<double> fn_acc(static_cast<size_t>(mhc3 * kd), 0.0),
      row(static_cast<size_t>(kd)), xg_acc(static_cast<size_t>(kd));
  uint16_t *xg = g.x_grad.data<uint16_t>();
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t k = 0; k < kd; ++k) {
      row[k] = bf16_value(xv[t * kd + k]);
      xg_acc[k] =
          x_grad ? bf16_value(x_grad->data<uint16_t>()[t * kd + k]) : 0.0;
    }
    for (int64_t j = 0; j < mhc3; ++j) {
      const double m = mgr[t * mhc3 + j];
      double *fa = fn_acc.data() + j * kd;
      const float *fj = fnr.data() + j * kd;
      for (int64_t k = 0; k < kd; ++k) {
        fa[k] += m * row[k];
        xg_acc[k] += m * fj[k];
      }
    }
    for (int64_t k = 0; k < kd; ++k)
      xg[t * kd + k] =
          bf16_bits(static_cast<float>(xg_acc[k] + 2.0 * row[k] * sg[t]));
  }
  for (int64_t i = 0; i < mhc3 * kd; ++i)
    g.fn_grad.data<float>()[i] = static_cast<float>(fn_acc[i]);
  return g;
}

MhcNormFnPartials mhc_pre_norm_fn_partials_ref(const HostTensor &residual,
                                               const HostTensor &fn,
                                               int n_splits) {
  const char *name = "mhc_pre_norm_fn_partials_ref";
  ResidualDims d = check_mhc_residual(name, residual);
  check_tensor(name, "fn", fn, DType::f32, 2, "");
  const int64_t rows = fn.size(0); // mhc_pre's mhc3, mhc_head's mhc
  check_shape(name, "fn", fn, {rows, d.kd});
  if (n_splits < 1 || d.kd % n_splits != 0)
    fail_value(name, "n_splits", fmt::format("{}", n_splits),
               fmt::format("a divisor of mhc * H = {}", d.kd));
  const int64_t part = d.kd / n_splits;
  MhcNormFnPartials r{HostTensor::zeros(DType::f32, {n_splits, d.n, rows}),
                      HostTensor::zeros(DType::f32, {n_splits, d.n})};
  const uint16_t *x = residual.data<uint16_t>();
  // fn rounded once, and each token's part widened once (the sums' orders
  // as written: over k ascending, in float64).
  std::vector<double> fr(static_cast<size_t>(rows * d.kd)),
      xs(static_cast<size_t>(part));
  for (int64_t i = 0; i < rows * d.kd; ++i)
    fr[i] = round_to_tf32(fn.data<float>()[i]);
  for (int64_t s = 0; s < n_splits; ++s)
    for (int64_t t = 0; t < d.n; ++t) {
      const uint16_t *xt = x + t * d.kd + s * part;
      double sq = 0;
      for (int64_t k = 0; k < part; ++k) {
        xs[k] = bf16_value(xt[k]);
        sq += xs[k] * xs[k];
      }
      r.sq.data<float>()[s * d.n + t] = static_cast<float>(sq);
      for (int64_t j = 0; j < rows; ++j) {
        const double *fj = fr.data() + j * d.kd + s * part;
        double acc = 0;
        for (int64_t k = 0; k < part; ++k)
          acc += xs[k] * fj[k];
        r.mul.data<float>()[(s * d.n + t) * rows + j] = static_cast<float>(acc);
      }
    }
  return r;
}

} // namespace tilejit::mhc
