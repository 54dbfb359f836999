// mhc_norm_steps.h - The op steps mHC's pre and head layers share: the
// norm's forward (fn * norm_weight when given, the product's split-K
// partials, their sums and the normalised mixes) and its backward (the
// norm's gradients, the product's: the residual's added in place, fn's,
// then the merge's).
#pragma once

#include "mhc/mhc_fn_normw_merge.h"
#include "mhc/mhc_pre_norm_fn_gemm_bwd.h"
#include "mhc/mhc_pre_norm_fn_partials.h"
#include "mhc/mhc_reduce_partials.h"
#include "modeling/op_steps.h"

#include "tilejit/error.h"

#include <fmt/format.h>

namespace tilejit::modeling {

/// The sizes of a layer's call: T tokens of residual (T, mhc, H), Kd = mhc
/// H, and the R mixes of fn (R, Kd). UserError unless residual is 3-D.
struct MhcNormDims {
  int64_t tokens, mhc, kd, rows;
};
inline MhcNormDims mhc_norm_dims(const char *layer,
                                 const rt::TensorView &residual,
                                 const rt::TensorView &fn) {
  if (residual.rank != 3)
    throw UserError(fmt::format("{}: argument 'residual' has rank {}; "
                                "requires (T, mhc, H)",
                                layer, residual.rank));
  return {residual.shape[0], residual.shape[1],
          residual.shape[1] * residual.shape[2], fn.rank > 0 ? fn.shape[0] : 0};
}

/// The norm's buffers (f32, contiguous): fn_merged (R, Kd) (absent without
/// a norm weight), mul_splits (S, T, R), sq_splits (S, T), out_mul (T, R),
/// sqrsum (T,), mixes (T, R).
struct MhcNormBuffers {
  const rt::TensorView &fn_merged, &mul_splits, &sq_splits, &out_mul, &sqrsum,
      &mixes;
};

/// Adds the norm's forward: mixes = the RMS-normalised product of residual
/// and fn (merged with norm_weight when given) in `splits` parts.
inline void add_norm_forward(Steps &steps, const MhcNormDims &d,
                             const rt::TensorView &residual,
                             const rt::TensorView &fn,
                             const rt::TensorView &norm_weight,
                             const MhcNormBuffers &b, int64_t splits,
                             float eps) {
  const bool weighted = !ops::is_absent(norm_weight);
  if (weighted)
    steps.add(mhc::mhc_fn_normw_merge_fwd_op(), {fn, norm_weight, b.fn_merged});
  steps.add(mhc::mhc_pre_norm_fn_partials_op(),
            {residual, weighted ? b.fn_merged : fn, b.mul_splits, b.sq_splits},
            {splits});
  steps.add(mhc::mhc_reduce_partials_and_rmsnorm_fwd_op(),
            {as(b.mul_splits, {splits, d.tokens, 1, d.rows}),
             as(b.sq_splits, {splits, d.tokens, 1}),
             as(b.out_mul, {d.tokens, 1, d.rows}), as(b.sqrsum, {d.tokens, 1}),
             b.mixes},
            {d.kd, static_cast<double>(eps)});
}

/// Adds the norm's backward from the mixes' gradient mixes_grad (T, R):
/// out_mul_grad (T, R) and sqrsum_grad (T,) (scratch), the residual's
/// gradient added into residual_grad, fn's written into fn_grad (without a
/// norm weight) or, through fn_merged_grad (R, Kd), added into fn_grad and
/// norm_weight_grad.
inline void add_norm_backward(
    Steps &steps, const MhcNormDims &d, const rt::TensorView &residual,
    const rt::TensorView &fn, const rt::TensorView &norm_weight,
    const MhcNormBuffers &b, const rt::TensorView &mixes_grad,
    const rt::TensorView &out_mul_grad, const rt::TensorView &sqrsum_grad,
    const rt::TensorView &fn_merged_grad, const rt::TensorView &residual_grad,
    const rt::TensorView &fn_grad, const rt::TensorView &norm_weight_grad,
    float eps) {
  const bool weighted = !ops::is_absent(norm_weight);
  steps.add(mhc::mhc_reduce_partials_and_rmsnorm_bwd_op(),
            {mixes_grad, as(b.out_mul, {d.tokens, 1, d.rows}),
             as(b.sqrsum, {d.tokens, 1}),
             as(out_mul_grad, {d.tokens, 1, d.rows}),
             as(sqrsum_grad, {d.tokens, 1})},
            {d.kd, static_cast<double>(eps)});
  steps.add(mhc::mhc_pre_norm_fn_gemm_bwd_op(),
            {out_mul_grad, sqrsum_grad, residual, weighted ? b.fn_merged : fn,
             residual_grad, residual_grad,
             weighted ? fn_merged_grad : fn_grad});
  if (weighted)
    steps.add(mhc::mhc_fn_normw_merge_bwd_op(),
              {fn, norm_weight, fn_merged_grad, fn_grad, norm_weight_grad,
               fn_grad, norm_weight_grad});
}

} // namespace tilejit::modeling
