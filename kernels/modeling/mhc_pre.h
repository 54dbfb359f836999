// mhc_pre.h - mHC's pre step as a trainable layer on the GPU (TileKernels
// 1.0's mhc_pre with autograd, shared/specs/moe_engram_mhc.md §3.3-§3.5,
// §3.10), forward and backward composed of the mHC ops on the caller's
// memory and stream: the norm's product as split-K partials
// (mhc_pre_norm_fn_partials) summed and normalised
// (mhc_reduce_partials_and_rmsnorm_fwd), split (mhc_pre_split_mixes_fwd),
// the comb part through Sinkhorn, the pre mix applied to the residual. The
// backward runs the ops' backwards in reverse and adds the residual's
// gradient into the caller's buffer in the order of TileKernels'
// gradient-sharing protocol (after mhc_post's: apply_mix's, then the
// norm's). CPU reference: mhc_reference.h's mhc_pre_ref and mhc_pre_bwd_ref.
#pragma once

#include "op/op_def.h"

#include "tilejit/runtime/tensor.h"

#include <cuda.h>

namespace tilejit::modeling {

/// mhc_pre's keyword arguments (TileKernels' defaults). n_splits: the
/// parts of mhc * H the norm's product is summed in (must divide it into
/// multiples of 8; 1.0 forced one, a tolerance apart).
struct MhcPreParams {
  float norm_eps = 1e-6f;
  float post_mult_value = 1.0f;
  float pre_eps = 1e-6f;
  float sinkhorn_eps = 1e-6f;
  int sinkhorn_repeat = 10;
  int n_splits = 16;
};

/// What the forward keeps for the backward (and its scratch), f32 and
/// contiguous in the caller's memory, for T tokens, mhc streams, M3 = mhc
/// (mhc + 2) mixes, Kd = mhc H: fn_merged (M3, Kd), fn * norm_weight (absent
/// without a norm weight); mul_splits (S, T, M3) and sq_splits (S, T), S =
/// n_splits; out_mul, mixes (T, M3) and sqrsum (T,); pre_mix (T, mhc, 1)
/// and comb_logits (T, mhc, mhc).
struct MhcPreSaved {
  rt::TensorView fn_merged, mul_splits, sq_splits, out_mul, sqrsum, mixes,
      pre_mix, comb_logits;
};

/// layer_input (bf16 (T, H)), post_mix (f32 (T, mhc, 1)) and comb_mix (f32
/// (T, mhc, mhc)) of residual bf16 (T, mhc, H), fn f32 (M3, Kd), scale f32
/// (3,), base f32 (M3,) and norm_weight f32 (Kd,) or ops::absent(). Every
/// op's call is checked before the first launches: a mistake throws the
/// UserError of the op that takes the argument, and nothing is written.
void mhc_pre_forward(const rt::TensorView &residual, const rt::TensorView &fn,
                     const rt::TensorView &scale, const rt::TensorView &base,
                     const rt::TensorView &norm_weight,
                     const rt::TensorView &layer_input,
                     const rt::TensorView &post_mix,
                     const rt::TensorView &comb_mix, const MhcPreSaved &saved,
                     const MhcPreParams &params, CUstream stream);

/// The backward's scratch, f32 and contiguous: pre_mix_grad (T, mhc, 1),
/// comb_logits_grad (T, mhc, mhc), mixes_grad and out_mul_grad (T, M3),
/// sqrsum_grad (T,), and fn_merged_grad (M3, Kd) (absent without a norm
/// weight).
struct MhcPreBackwardScratch {
  rt::TensorView pre_mix_grad, comb_logits_grad, mixes_grad, out_mul_grad,
      sqrsum_grad, fn_merged_grad;
};

/// From the gradients of layer_input, post_mix and comb_mix: the residual's
/// gradient added in place into residual_grad (bf16 (T, mhc, H): the
/// buffer mhc_post's backward returned, which then holds the total),
/// scale_grad (3,) and base_grad (M3,) written; fn_grad (M3, Kd) written
/// without a norm weight; with one, fn_grad += the merged fn's gradient *
/// norm_weight and norm_weight_grad (Kd,) += its column sums times fn
/// (zeros for fresh gradients, or the parameters' main_grad, as
/// TileKernels does). post_mix is the forward's.
void mhc_pre_backward(
    const rt::TensorView &residual, const rt::TensorView &fn,
    const rt::TensorView &scale, const rt::TensorView &base,
    const rt::TensorView &norm_weight, const rt::TensorView &post_mix,
    const MhcPreSaved &saved, const rt::TensorView &layer_input_grad,
    const rt::TensorView &post_mix_grad, const rt::TensorView &comb_mix_grad,
    const rt::TensorView &residual_grad, const rt::TensorView &fn_grad,
    const rt::TensorView &norm_weight_grad, const rt::TensorView &scale_grad,
    const rt::TensorView &base_grad, const MhcPreBackwardScratch &scratch,
    const MhcPreParams &params, CUstream stream);

} // namespace tilejit::modeling
