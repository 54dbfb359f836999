// mhc_head.h - mHC's head as a trainable layer on the GPU (TileKernels
// 1.0's mhc_head with autograd, shared/specs/moe_engram_mhc.md §3.7,
// §3.10): the last layer's streams mixed into one hidden state. Forward:
// the norm's product of fn's mhc rows as split-K partials, summed and
// normalised, the head's mixes sigmoid(mix * scale + base) + pre_eps, the
// streams mixed (mhc_pre_apply_mix). Backward: their backwards in reverse,
// the residual's gradient added into the caller's buffer (apply_mix's, then
// the norm's). CPU reference: mhc_reference.h's mhc_head_ref and
// mhc_head_bwd_ref.
#pragma once

#include "op/op_def.h"

#include "tilejit/runtime/tensor.h"

#include <cuda.h>

namespace tilejit::modeling {

struct MhcHeadParams {
  float norm_eps = 1e-6f;
  float pre_eps = 1e-6f;
  int n_splits = 16; ///< as MhcPreParams's
};

/// The forward's saved values and scratch, f32 contiguous, for T tokens,
/// mhc streams, Kd = mhc H: fn_merged (mhc, Kd) (absent without a norm
/// weight), mul_splits (S, T, mhc), sq_splits (S, T), out_mul and input_mix
/// (T, mhc), sqrsum (T,), mix (T, mhc, 1).
struct MhcHeadSaved {
  rt::TensorView fn_merged, mul_splits, sq_splits, out_mul, sqrsum, input_mix,
      mix;
};

/// out (bf16 (T, H)) of residual bf16 (T, mhc, H), fn f32 (mhc, Kd), scale
/// f32 (1,), base f32 (mhc,), norm_weight f32 (Kd,) or ops::absent(); every
/// op call checked before the first launches.
void mhc_head_forward(const rt::TensorView &residual, const rt::TensorView &fn,
                      const rt::TensorView &scale, const rt::TensorView &base,
                      const rt::TensorView &norm_weight,
                      const rt::TensorView &out, const MhcHeadSaved &saved,
                      const MhcHeadParams &params, CUstream stream);

/// The backward's scratch, f32 contiguous: mix_grad (T, mhc, 1),
/// input_mix_grad and out_mul_grad (T, mhc), sqrsum_grad (T,),
/// fn_merged_grad (mhc, Kd) (absent without a norm weight).
struct MhcHeadBackwardScratch {
  rt::TensorView mix_grad, input_mix_grad, out_mul_grad, sqrsum_grad,
      fn_merged_grad;
};

/// From out_grad (bf16 (T, H)): the residual's gradient added in place into
/// residual_grad (bf16 (T, mhc, H)); scale_grad_partial (B, 1) and
/// base_grad_partial (B, mhc), B blocks' partial sums (their sum over rows
/// is the gradient, as 2.1's mhc_head_compute_mix_bwd); fn_grad (mhc, Kd)
/// written without a norm weight, with one fn_grad and norm_weight_grad
/// (Kd,) added to (as MhcPre's).
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
                       const MhcHeadParams &params, CUstream stream);

} // namespace tilejit::modeling
