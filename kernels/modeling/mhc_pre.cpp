// mhc_pre.cpp - mHC's pre step as a layer on the GPU: its forward and
// backward as sequences of the mHC ops, every call bound (checked) before
// the first launches.
#include "modeling/mhc_pre.h"

#include "mhc/mhc_fn_normw_merge.h"
#include "mhc/mhc_mixes.h"
#include "mhc/mhc_pre_norm_fn_gemm_bwd.h"
#include "mhc/mhc_pre_norm_fn_partials.h"
#include "mhc/mhc_reduce_partials.h"
#include "mhc/mhc_stream.h"
#include "mhc/sinkhorn_normalize.h"
#include "modeling/op_steps.h"

#include "tilejit/error.h"

#include <fmt/format.h>

#include <vector>

namespace tilejit::modeling {

namespace {

struct Dims {
  int64_t tokens, mhc, hidden, mixes, kd;
};

Dims dims_of(const rt::TensorView &residual) {
  if (residual.rank != 3)
    throw UserError(fmt::format("mhc_pre: argument 'residual' has rank {}; "
                                "requires (T, mhc, H)",
                                residual.rank));
  const int64_t mhc = residual.shape[1];
  return {residual.shape[0], mhc, residual.shape[2], mhc * (mhc + 2),
          mhc * residual.shape[2]};
}

double real(float v) { return static_cast<double>(v); }

} // namespace

void mhc_pre_forward(const rt::TensorView &residual, const rt::TensorView &fn,
                     const rt::TensorView &scale, const rt::TensorView &base,
                     const rt::TensorView &norm_weight,
                     const rt::TensorView &layer_input,
                     const rt::TensorView &post_mix,
                     const rt::TensorView &comb_mix, const MhcPreSaved &saved,
                     const MhcPreParams &p, CUstream stream) {
  const Dims d = dims_of(residual);
  const int64_t splits = p.n_splits;
  const bool weighted = !ops::is_absent(norm_weight);
  const rt::TensorView &fn_used = weighted ? saved.fn_merged : fn;
  Steps steps;
  if (weighted)
    steps.add(mhc::mhc_fn_normw_merge_fwd_op(),
              {fn, norm_weight, saved.fn_merged});
  steps.add(mhc::mhc_pre_norm_fn_partials_op(),
            {residual, fn_used, saved.mul_splits, saved.sq_splits}, {splits});
  steps.add(mhc::mhc_reduce_partials_and_rmsnorm_fwd_op(),
            {as(saved.mul_splits, {splits, d.tokens, 1, d.mixes}),
             as(saved.sq_splits, {splits, d.tokens, 1}),
             as(saved.out_mul, {d.tokens, 1, d.mixes}),
             as(saved.sqrsum, {d.tokens, 1}), saved.mixes},
            {d.kd, real(p.norm_eps)});
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
  const Dims d = dims_of(residual);
  const bool weighted = !ops::is_absent(norm_weight);
  const rt::TensorView &fn_used = weighted ? saved.fn_merged : fn;
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
  steps.add(mhc::mhc_reduce_partials_and_rmsnorm_bwd_op(),
            {scratch.mixes_grad, as(saved.out_mul, {d.tokens, 1, d.mixes}),
             as(saved.sqrsum, {d.tokens, 1}),
             as(scratch.out_mul_grad, {d.tokens, 1, d.mixes}),
             as(scratch.sqrsum_grad, {d.tokens, 1})},
            {d.kd, real(p.norm_eps)});
  steps.add(mhc::mhc_pre_norm_fn_gemm_bwd_op(),
            {scratch.out_mul_grad, scratch.sqrsum_grad, residual, fn_used,
             residual_grad, residual_grad,
             weighted ? scratch.fn_merged_grad : fn_grad});
  if (weighted)
    steps.add(mhc::mhc_fn_normw_merge_bwd_op(),
              {fn, norm_weight, scratch.fn_merged_grad, fn_grad,
               norm_weight_grad, fn_grad, norm_weight_grad});
  steps.run(stream);
}

} // namespace tilejit::modeling
