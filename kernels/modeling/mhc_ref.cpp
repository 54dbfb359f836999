// mhc_ref.cpp - CPU reference of the mHC functional layer and its
// residual-gradient sharing protocol (spec §3.10).
#include "modeling/mhc_reference.h"

#include "mhc/mhc_common.h"

#include <fmt/format.h>

namespace tilejit::modeling {

using namespace mhc::detail;

void MhcResidualGradRegistry::install(const HostTensor &residual,
                                      const HostTensor &grad) {
  buffers_.insert_or_assign(residual.raw(), grad);
}

std::optional<HostTensor>
MhcResidualGradRegistry::find(const HostTensor &residual) const {
  auto it = buffers_.find(residual.raw());
  if (it == buffers_.end())
    return std::nullopt;
  return it->second;
}

void MhcResidualGradRegistry::erase(const HostTensor &residual) {
  buffers_.erase(residual.raw());
}

HostTensor expand_from_embedding_ref(const HostTensor &x, int mhc_mult) {
  return mhc::expand_to_mhc_ref(x, mhc_mult);
}

HostTensor expand_from_embedding_bwd_ref(const HostTensor &out_grad) {
  return mhc::expand_to_mhc_bwd_ref(out_grad);
}

namespace {

/// mhc_mult must be the residual's stream count.
void check_mhc_mult(const char *fn, const HostTensor &residual, int mhc_mult) {
  ResidualDims d = check_mhc_residual(fn, residual);
  if (d.mhc != mhc_mult)
    fail_value(fn, "mhc_mult", fmt::format("{}", mhc_mult),
               fmt::format("the residual's stream count {} (residual shape "
                           "(..., mhc, H))",
                           d.mhc));
}

} // namespace

MhcPreOutput mhc_pre_ref(const HostTensor &residual, const HostTensor &fn,
                         const HostTensor &scale, const HostTensor &base,
                         const MhcPreKwargs &kw, bool grad_enabled) {
  check_mhc_mult("mhc_pre_ref", residual, kw.mhc_mult);
  if (!grad_enabled) {
    // Choice: the original's no-grad path calls the big fuse without
    // norm_weight (spec §7.14); we merge it into fn first so that inference
    // and training compute the same function.
    HostTensor fused_fn =
        kw.norm_weight ? mhc::mhc_fn_normw_merge_ref(fn, *kw.norm_weight) : fn;
    mhc::MhcBigFuseResult r = mhc::mhc_pre_big_fuse_ref(
        residual, fused_fn, scale, base, kw.norm_eps, kw.pre_eps,
        kw.sinkhorn_eps, kw.post_mult_value, kw.sinkhorn_repeat, kw.n_splits);
    return {r.layer_input, r.post_mix, r.comb_mix, std::nullopt};
  }
  mhc::MhcPreNormFnResult norm = mhc::mhc_pre_norm_fn_ref(
      residual, fn, kw.norm_weight, kw.norm_eps, true, kw.n_splits);
  mhc::MhcSplitMixes split = mhc::mhc_pre_split_mixes_ref(
      norm.out, scale, base, kw.mhc_mult, kw.post_mult_value, kw.pre_eps);
  HostTensor comb = mhc::sinkhorn_normalize_ref(
      split.comb_mix, kw.sinkhorn_repeat, kw.sinkhorn_eps);
  HostTensor layer_input = mhc::mhc_pre_apply_mix_ref(residual, split.pre_mix);
  return {layer_input, split.post_mix, comb,
          MhcPreContext{residual, fn, scale, base, kw, norm, split}};
}

MhcPreGrads mhc_pre_bwd_ref(const MhcPreContext &ctx,
                            const HostTensor &layer_input_grad,
                            const HostTensor &post_mix_grad,
                            const HostTensor &comb_mix_grad,
                            MhcResidualGradRegistry &registry) {
  const MhcPreKwargs &kw = ctx.kwargs;
  HostTensor comb_logits_grad = mhc::sinkhorn_normalize_bwd_ref(
      comb_mix_grad, ctx.split.comb_mix, kw.sinkhorn_repeat, kw.sinkhorn_eps);
  // apply_mix adds to the buffer mhc_post installed; without one (the
  // residual fed no mhc_post) it starts a buffer of its own.
  std::optional<HostTensor> buffer = registry.find(ctx.residual);
  bool shared = buffer.has_value();
  mhc::MhcPreApplyMixGrads apply = mhc::mhc_pre_apply_mix_bwd_ref(
      layer_input_grad, ctx.residual, ctx.split.pre_mix, buffer);
  if (!shared)
    buffer = apply.x_grad;
  mhc::MhcSplitMixesGrads split = mhc::mhc_pre_split_mixes_bwd_ref(
      apply.mix_grad, post_mix_grad, comb_logits_grad, ctx.norm.out,
      ctx.split.post_mix, ctx.scale, ctx.base, kw.mhc_mult, kw.post_mult_value);
  mhc::MhcPreNormFnGrads norm = mhc::mhc_pre_norm_fn_bwd_ref(
      split.input_mixes_grad, ctx.residual, ctx.norm.fn_rounded, ctx.norm.mul,
      ctx.norm.sq, kw.norm_eps, buffer);
  registry.erase(ctx.residual);

  MhcPreGrads g{shared ? std::nullopt : buffer, norm.fn_grad,
                split.mhc_scale_grad, split.mhc_base_grad, std::nullopt};
  if (kw.norm_weight) {
    mhc::MhcFnNormwMergeGrads merge =
        mhc::mhc_fn_normw_merge_bwd_ref(norm.fn_grad, ctx.fn, *kw.norm_weight);
    g.fn_grad = merge.fn_grad;
    g.norm_weight_grad = merge.norm_weight_grad;
  }
  return g;
}

HostTensor mhc_post_ref(const HostTensor &x, const HostTensor &residual,
                        const HostTensor &post_layer_mix,
                        const HostTensor &comb_res_mix) {
  return mhc::mhc_post_ref(x, residual, post_layer_mix, comb_res_mix);
}

mhc::MhcPostGrads
mhc_post_bwd_ref(const HostTensor &out_grad, const HostTensor &x,
                 const HostTensor &residual, const HostTensor &post_layer_mix,
                 const HostTensor &comb_res_mix,
                 MhcResidualGradRegistry &registry, bool fuse_grad_acc) {
  mhc::MhcPostGrads g = mhc::mhc_post_bwd_ref(out_grad, x, residual,
                                              post_layer_mix, comb_res_mix);
  if (fuse_grad_acc)
    registry.install(residual, g.residual_grad);
  return g;
}

MhcHeadOutput mhc_head_ref(const HostTensor &residual, const HostTensor &fn,
                           const HostTensor &scale, const HostTensor &base,
                           const MhcHeadKwargs &kw) {
  const char *name = "mhc_head_ref";
  check_mhc_mult(name, residual, kw.mhc_mult);
  ResidualDims d = check_mhc_residual(name, residual);
  check_tensor(name, "fn", fn, DType::f32, 0, "");
  check_shape(name, "fn", fn, {d.mhc, d.kd});
  check_dtype(name, "scale", scale, DType::f32);
  bool scalar = scale.rank() == 0;
  if (!scalar)
    check_shape(name, "scale", scale, {1});
  HostTensor scale1 = scale.reinterpret(DType::f32, std::vector<int64_t>{1});

  // Zero-pad fn to mhc3 rows so the shared projection kernel can run.
  HostTensor fn_padded = HostTensor::zeros(DType::f32, {d.mhc3, d.kd});
  std::copy(fn.data<float>(), fn.data<float>() + fn.numel(),
            fn_padded.data<float>());
  mhc::MhcPreNormFnResult norm = mhc::mhc_pre_norm_fn_ref(
      residual, fn_padded, kw.norm_weight, kw.norm_eps, true, kw.n_splits);
  // Choice: the original passes the strided slice mixes[..., :mhc] to a
  // kernel that needs a contiguous input (spec §7.15); we copy it.
  std::vector<int64_t> lead = leading_shape(residual, 2);
  HostTensor input_mix =
      HostTensor::zeros(DType::f32, with_tail(lead, {d.mhc}));
  for (int64_t t = 0; t < d.n; ++t)
    for (int m = 0; m < d.mhc; ++m)
      input_mix.data<float>()[t * d.mhc + m] =
          norm.out.data<float>()[t * d.mhc3 + m];
  HostTensor mix3 =
      mhc::mhc_head_compute_mix_ref(input_mix, scale1, base, kw.pre_eps);
  HostTensor mix = mix3.reinterpret(DType::f32, with_tail(lead, {d.mhc, 1}));
  HostTensor out = mhc::mhc_pre_apply_mix_ref(residual, mix);
  return {out, MhcHeadContext{residual, fn_padded, scale1, base, kw.norm_weight,
                              kw, norm, input_mix, mix, scalar}};
}

MhcHeadGrads mhc_head_bwd_ref(const MhcHeadContext &ctx,
                              const HostTensor &out_grad,
                              MhcResidualGradRegistry &registry) {
  const MhcHeadKwargs &kw = ctx.kwargs;
  ResidualDims d = check_mhc_residual("mhc_head_bwd_ref", ctx.residual);
  // Choice: the original's head always adds to grad_from_mhc_post and fails
  // when no mhc_post installed it (spec §7.15); we use it only if present.
  std::optional<HostTensor> buffer = registry.find(ctx.residual);
  bool shared = buffer.has_value();
  mhc::MhcPreApplyMixGrads apply =
      mhc::mhc_pre_apply_mix_bwd_ref(out_grad, ctx.residual, ctx.mix, buffer);
  if (!shared)
    buffer = apply.x_grad;
  HostTensor mix_grad =
      apply.mix_grad.reinterpret(DType::f32, ctx.input_mix.shape());
  mhc::MhcHeadComputeMixGrads head = mhc::mhc_head_compute_mix_bwd_ref(
      mix_grad, ctx.input_mix, ctx.scale, ctx.base);
  // Gradient of the slice mixes[..., :mhc]: zeros in the other columns.
  HostTensor mixes_grad = HostTensor::zeros(DType::f32, ctx.norm.out.shape());
  for (int64_t t = 0; t < d.n; ++t)
    for (int m = 0; m < d.mhc; ++m)
      mixes_grad.data<float>()[t * d.mhc3 + m] =
          head.input_mix_grad.data<float>()[t * d.mhc + m];
  mhc::MhcPreNormFnGrads norm = mhc::mhc_pre_norm_fn_bwd_ref(
      mixes_grad, ctx.residual, ctx.norm.fn_rounded, ctx.norm.mul, ctx.norm.sq,
      kw.norm_eps, buffer);
  registry.erase(ctx.residual);

  HostTensor padded_grad = norm.fn_grad;
  std::optional<HostTensor> norm_weight_grad;
  if (ctx.norm_weight) {
    mhc::MhcFnNormwMergeGrads merge = mhc::mhc_fn_normw_merge_bwd_ref(
        norm.fn_grad, ctx.fn_padded, *ctx.norm_weight);
    padded_grad = merge.fn_grad;
    norm_weight_grad = merge.norm_weight_grad;
  }
  // Gradient of the zero padding: the first mhc rows.
  HostTensor fn_grad = HostTensor::zeros(DType::f32, {d.mhc, d.kd});
  std::copy(padded_grad.data<float>(),
            padded_grad.data<float>() + fn_grad.numel(), fn_grad.data<float>());
  HostTensor scale_grad =
      ctx.scale_is_scalar
          ? head.mhc_scale_grad.reinterpret(DType::f32, std::vector<int64_t>{})
          : head.mhc_scale_grad;
  return {shared ? std::nullopt : buffer, fn_grad, scale_grad,
          head.mhc_base_grad, norm_weight_grad};
}

} // namespace tilejit::modeling
