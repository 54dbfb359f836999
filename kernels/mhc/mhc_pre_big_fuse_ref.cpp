// mhc_pre_big_fuse_ref.cpp - CPU reference of mhc_pre_big_fuse (spec §3.8):
// the inference-time mhc_pre, written per token as the fused kernel runs it,
// from the same per-token sequences as the separate references; and of 2.1's
// mhc_pre_big_fuse_fwd (tk21_ops.md §6.4), the chain of those references on
// the GEMM's split-K partials.
#include "mhc/mhc_common.h"
#include "mhc/reference.h"

#include <fmt/format.h>

namespace tilejit::mhc {

using namespace detail;

MhcBigFuseResult mhc_pre_big_fuse_ref(const HostTensor &residual,
                                      const HostTensor &fn,
                                      const HostTensor &mhc_scale,
                                      const HostTensor &mhc_base, float rms_eps,
                                      float mhc_pre_eps, float mhc_sinkhorn_eps,
                                      float mhc_post_mult_value,
                                      int sinkhorn_repeat, int n_splits) {
  const char *name = "mhc_pre_big_fuse_ref";
  ResidualDims d = check_mhc_residual(name, residual);
  check_tensor(name, "fn", fn, DType::f32, 0, "");
  check_shape(name, "fn", fn, {d.mhc3, d.kd});
  check_tensor(name, "mhc_scale", mhc_scale, DType::f32, 0, "");
  check_shape(name, "mhc_scale", mhc_scale, {3});
  check_tensor(name, "mhc_base", mhc_base, DType::f32, 0, "");
  check_shape(name, "mhc_base", mhc_base, {d.mhc3});
  if (sinkhorn_repeat < 1)
    fail_value(name, "sinkhorn_repeat", fmt::format("{}", sinkhorn_repeat),
               ">= 1");
  if (n_splits < 1) // accepted and ignored, as in mhc_pre_norm_fn
    fail_value(name, "n_splits", fmt::format("{}", n_splits), ">= 1");

  const int mhc = d.mhc;
  int64_t hid = residual.shape().back();
  std::vector<int64_t> lead = leading_shape(residual, 2);
  MhcBigFuseResult r{HostTensor::zeros(DType::f32, with_tail(lead, {mhc, 1})),
                     HostTensor::zeros(DType::f32, with_tail(lead, {mhc, mhc})),
                     HostTensor::zeros(DType::bf16, with_tail(lead, {hid}))};
  std::vector<float> fnr(fn.numel());
  for (int64_t i = 0; i < fn.numel(); ++i)
    fnr[i] = round_to_tf32(fn.data<float>()[i]);

  const uint16_t *x = residual.data<uint16_t>();
  std::vector<float> mixes(d.mhc3), pre(mhc), logits(mhc * mhc), col(mhc);
  for (int64_t t = 0; t < d.n; ++t) {
    const uint16_t *xt = x + t * d.kd;
    // Warp 0 of the original: mixes, post, comb and the Sinkhorn.
    float sq;
    norm_fn_token(xt, fnr.data(), d.kd, d.mhc3, mixes.data(), &sq);
    float rms = norm_rms(sq, d.kd, rms_eps);
    for (float &m : mixes)
      m = m * rms;
    split_mixes_token(mixes.data(), mhc_scale.data<float>(),
                      mhc_base.data<float>(), mhc, mhc_post_mult_value,
                      mhc_pre_eps, pre.data(),
                      r.post_mix.data<float>() + t * mhc, logits.data());
    sinkhorn_matrix(logits.data(), r.comb_mix.data<float>() + t * mhc * mhc,
                    mhc, sinkhorn_repeat, mhc_sinkhorn_eps);
    // Warps 1-2: pre and the apply over H.
    for (int64_t h = 0; h < hid; ++h) {
      for (int m = 0; m < mhc; ++m)
        col[m] = bf16_value(xt[m * hid + h]);
      r.layer_input.data<uint16_t>()[t * hid + h] =
          bf16_bits(apply_mix_chain(pre.data(), col.data(), mhc));
    }
  }
  return r;
}

MhcBigFuseResult mhc_pre_big_fuse_fwd_ref(
    const HostTensor &gemm_out_mul, const HostTensor &gemm_out_sqrsum,
    const HostTensor &mhc_scale, const HostTensor &mhc_base,
    const HostTensor &residual, float rms_eps, float mhc_pre_eps,
    float mhc_sinkhorn_eps, float mhc_post_mult_value, int sinkhorn_repeat) {
  const char *name = "mhc_pre_big_fuse_fwd_ref";
  check_tensor(name, "residual", residual, DType::bf16, 3, "");
  const int64_t t = residual.size(0), mhc = residual.size(1),
                h = residual.size(2), mhc3 = mhc * (mhc + 2);
  check_tensor(name, "gemm_out_mul", gemm_out_mul, DType::f32, 3, "");
  const int64_t splits = gemm_out_mul.size(0);
  check_shape(name, "gemm_out_mul", gemm_out_mul, {splits, t, mhc3});
  check_tensor(name, "gemm_out_sqrsum", gemm_out_sqrsum, DType::f32, 2, "");
  check_shape(name, "gemm_out_sqrsum", gemm_out_sqrsum, {splits, t});
  const int64_t mul_shape[] = {splits, t, 1, mhc3}, sq_shape[] = {splits, t, 1};
  MhcReducePartialsResult mixes = mhc_reduce_partials_and_rmsnorm_fwd_ref(
      gemm_out_mul.reinterpret(DType::f32, mul_shape),
      gemm_out_sqrsum.reinterpret(DType::f32, sq_shape), mhc * h, rms_eps);
  MhcSplitMixes split = mhc_pre_split_mixes_ref(
      mixes.out, mhc_scale, mhc_base, static_cast<int>(mhc),
      mhc_post_mult_value, mhc_pre_eps);
  HostTensor comb =
      sinkhorn_normalize_ref(split.comb_mix, sinkhorn_repeat, mhc_sinkhorn_eps);
  const int64_t post_shape[] = {t, mhc}, comb_shape[] = {t, mhc * mhc};
  return {split.post_mix.reinterpret(DType::f32, post_shape),
          comb.reinterpret(DType::f32, comb_shape),
          mhc_pre_apply_mix_ref(residual, split.pre_mix)};
}

} // namespace tilejit::mhc
