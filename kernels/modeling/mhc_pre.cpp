// mhc_pre.cpp - mHC's pre step as a layer on the GPU: its forward and
// backward as sequences of the mHC ops, every call bound (checked) before
// the first launches.
#include "modeling/mhc_pre.h"

#include "mhc/mhc_mixes.h"
#include "mhc/mhc_stream.h"
#include "mhc/sinkhorn_normalize.h"
#include "modeling/mhc_norm_steps.h"

namespace tilejit::modeling {

void mhc_pre_forward(const rt::TensorView &residual, const rt::TensorView &fn,
                     const rt::TensorView &scale, const rt::TensorView &base,
                     const rt::TensorView &norm_weight,
                     const rt::TensorView &layer_input,
                     const rt::TensorView &post_mix,
                     const rt::TensorView &comb_mix, const MhcPreSaved &saved,
                     const MhcPreParams &p, CUstream stream) {
  const MhcNormDims d = mhc_norm_dims("mhc_pre", residual, fn);
  Steps steps;
  add_norm_forward(steps, d, residual, fn, norm_weight,
                   {saved.fn_merged, saved.mul_splits, saved.sq_splits,
                    saved.out_mul, saved.sqrsum, saved.mixes},
                   p.n_splits, p.norm_eps);
  steps.add(
      mhc::mhc_pre_split_mixes_fwd_op(),
      {saved.mixes, scale, base, saved.pre_mix, post_mix, saved.comb_logits},
      {d.mhc, real(p.post_mult_value), real(p.pre_eps)});
  steps.add(mhc::sinkhorn_normalize_op(), {saved.comb_logits, comb_mix},
            {int64_t{p.sinkhorn_repeat}, real(p.sinkhorn_eps)});
  steps.add(mhc::mhc_pre_apply_mix_fwd_op(),
            {residual, saved.pre_mix, layer_input});
  steps.run(stream);
}

void mhc_pre_backward(
    const rt::TensorView &residual, const rt::TensorView &fn,
    const rt::TensorView &scale, const rt::TensorView &base,
    const rt::TensorView &norm_weight, const rt::TensorView &post_mix,
    const MhcPreSaved &saved, const rt::TensorView &layer_input_grad,
    const rt::TensorView &post_mix_grad, const rt::TensorView &comb_mix_grad,
    const rt::TensorView &residual_grad, const rt::TensorView &fn_grad,
    const rt::TensorView &norm_weight_grad, const rt::TensorView &scale_grad,
    const rt::TensorView &base_grad, const MhcPreBackwardScratch &scratch,
    const MhcPreParams &p, CUstream stream) {
  const MhcNormDims d = mhc_norm_dims("mhc_pre", residual, fn);
  Steps steps;
  // The residual's gradient: apply_mix's, then the norm's (the protocol's
  // order after mhc_post's), each added in place and rounded to bf16.
  steps.add(mhc::mhc_pre_apply_mix_bwd_op(),
            {layer_input_grad, residual, saved.pre_mix, residual_grad,
             residual_grad, scratch.pre_mix_grad});
  steps.add(mhc::mhc_sinkhorn_bwd_op(),
            {comb_mix_grad, saved.comb_logits, scratch.comb_logits_grad},
            {int64_t{p.sinkhorn_repeat}, real(p.sinkhorn_eps)});
  steps.add(mhc::mhc_pre_split_mixes_bwd_op(),
            {scratch.pre_mix_grad, post_mix_grad, scratch.comb_logits_grad,
             saved.mixes, post_mix, scale, base, scratch.mixes_grad, scale_grad,
             base_grad},
            {real(p.post_mult_value)});
  add_norm_backward(steps, d, residual, fn, norm_weight,
                    {saved.fn_merged, saved.mul_splits, saved.sq_splits,
                     saved.out_mul, saved.sqrsum, saved.mixes},
                    scratch.mixes_grad, scratch.out_mul_grad,
                    scratch.sqrsum_grad, scratch.fn_merged_grad, residual_grad,
                    fn_grad, norm_weight_grad, p.norm_eps);
  steps.run(stream);
}

} // namespace tilejit::modeling
