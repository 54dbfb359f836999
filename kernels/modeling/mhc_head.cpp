// mhc_head.cpp - mHC's head as a layer on the GPU: its forward and backward
// as sequences of the mHC ops (op_steps.h).
#include "modeling/mhc_head.h"

#include "mhc/mhc_fn_normw_merge.h"
#include "mhc/mhc_mixes.h"
#include "mhc/mhc_pre_norm_fn_gemm_bwd.h"
#include "mhc/mhc_pre_norm_fn_partials.h"
#include "mhc/mhc_reduce_partials.h"
#include "mhc/mhc_stream.h"
#include "modeling/op_steps.h"

#include "tilejit/error.h"

#include <fmt/format.h>

namespace tilejit::modeling {

namespace {

struct Dims {
  int64_t tokens, mhc, kd;
};

Dims dims_of(const rt::TensorView &residual) {
  if (residual.rank != 3)
    throw UserError(fmt::format("mhc_head: argument 'residual' has rank {}; "
                                "requires (T, mhc, H)",
                                residual.rank));
  return {residual.shape[0], residual.shape[1],
          residual.shape[1] * residual.shape[2]};
}

double real(float v) { return static_cast<double>(v); }

} // namespace

void mhc_head_forward(const rt::TensorView &residual, const rt::TensorView &fn,
                      const rt::TensorView &scale, const rt::TensorView &base,
                      const rt::TensorView &norm_weight,
                      const rt::TensorView &out, const MhcHeadSaved &saved,
                      const MhcHeadParams &p, CUstream stream) {
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
            {as(saved.mul_splits, {splits, d.tokens, 1, d.mhc}),
             as(saved.sq_splits, {splits, d.tokens, 1}),
             as(saved.out_mul, {d.tokens, 1, d.mhc}),
             as(saved.sqrsum, {d.tokens, 1}), saved.input_mix},
            {d.kd, real(p.norm_eps)});
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
  const Dims d = dims_of(residual);
  const bool weighted = !ops::is_absent(norm_weight);
  const rt::TensorView &fn_used = weighted ? saved.fn_merged : fn;
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
  steps.add(mhc::mhc_reduce_partials_and_rmsnorm_bwd_op(),
            {scratch.input_mix_grad, as(saved.out_mul, {d.tokens, 1, d.mhc}),
             as(saved.sqrsum, {d.tokens, 1}),
             as(scratch.out_mul_grad, {d.tokens, 1, d.mhc}),
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
