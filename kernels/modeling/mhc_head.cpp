// mhc_head.cpp - mHC's head as a layer on the GPU: its forward and backward
// as sequences of the mHC ops (op_steps.h).
#include "modeling/mhc_head.h"

#include "mhc/mhc_mixes.h"
#include "mhc/mhc_stream.h"
#include "modeling/mhc_norm_steps.h"

namespace tilejit::modeling {

void mhc_head_forward(const rt::TensorView &residual, const rt::TensorView &fn,
                      const rt::TensorView &scale, const rt::TensorView &base,
                      const rt::TensorView &norm_weight,
                      const rt::TensorView &out, const MhcHeadSaved &saved,
                      const MhcHeadParams &p, CUstream stream) {
  const MhcNormDims d = mhc_norm_dims("mhc_head", residual, fn);
  Steps steps;
  add_norm_forward(steps, d, residual, fn, norm_weight,
                   {saved.fn_merged, saved.mul_splits, saved.sq_splits,
                    saved.out_mul, saved.sqrsum, saved.input_mix},
                   p.n_splits, p.norm_eps);
  steps.add(mhc::mhc_head_compute_mix_fwd_op(),
            {saved.input_mix, scale, base, as(saved.mix, {d.tokens, d.mhc})},
            {real(p.pre_eps)});
  steps.add(mhc::mhc_pre_apply_mix_fwd_op(), {residual, saved.mix, out});
  steps.run(stream);
}

void mhc_head_backward(const rt::TensorView &residual, const rt::TensorView &fn,
                       const rt::TensorView &scale, const rt::TensorView &base,
                       const rt::TensorView &norm_weight,
                       const MhcHeadSaved &saved,
                       const rt::TensorView &out_grad,
                       const rt::TensorView &residual_grad,
                       const rt::TensorView &fn_grad,
                       const rt::TensorView &norm_weight_grad,
                       const rt::TensorView &scale_grad_partial,
                       const rt::TensorView &base_grad_partial,
                       const MhcHeadBackwardScratch &scratch,
                       const MhcHeadParams &p, CUstream stream) {
  const MhcNormDims d = mhc_norm_dims("mhc_head", residual, fn);
  const int64_t blocks =
      scale_grad_partial.rank > 0 ? scale_grad_partial.shape[0] : 0;
  Steps steps;
  steps.add(mhc::mhc_pre_apply_mix_bwd_op(),
            {out_grad, residual, saved.mix, residual_grad, residual_grad,
             scratch.mix_grad});
  steps.add(mhc::mhc_head_compute_mix_bwd_op(),
            {as(scratch.mix_grad, {d.tokens, d.mhc}), saved.input_mix, scale,
             base, scratch.input_mix_grad, scale_grad_partial,
             base_grad_partial},
            {blocks});
  add_norm_backward(steps, d, residual, fn, norm_weight,
                    {saved.fn_merged, saved.mul_splits, saved.sq_splits,
                     saved.out_mul, saved.sqrsum, saved.input_mix},
                    scratch.input_mix_grad, scratch.out_mul_grad,
                    scratch.sqrsum_grad, scratch.fn_merged_grad, residual_grad,
                    fn_grad, norm_weight_grad, p.norm_eps);
  steps.run(stream);
}

} // namespace tilejit::modeling
