// reference.h - CPU references of the Manifold HyperConnection (mHC) ops
// (shared/specs/moe_engram_mhc.md §3): forward and backward of each kernel.
//
// Conventions: residual streams are bf16 `(..., mhc, H)`, mixes fp32; any
// number of leading (token) dims, all tensors contiguous. Element arithmetic
// follows the spec's fp32 sequences (FMA chains written as std::fma); sums
// over tokens, H or K (the original's block reductions and GEMMs) are taken
// in float64 and rounded once. A backward that the original returns as None
// when it accumulated into a shared buffer returns std::nullopt here.
#pragma once

#include "common/host_tensor.h"

#include <optional>
#include <vector>

namespace tilejit::mhc {

using ref::HostTensor;

// --- §3.1 expand_to_mhc ------------------------------------------------------
/// bf16 `(..., H)` -> bf16 `(..., mhc_mult, H)`, each stream a copy of the
/// row. Writes into `out` when given (bf16, contiguous) and returns it.
///   expand_to_mhc_ref(x /*bf16[T, H]*/, 4)   // bf16[T, 4, H]
HostTensor expand_to_mhc_ref(const HostTensor &hidden, int mhc_mult,
                             std::optional<HostTensor> out = std::nullopt);
/// hidden_grad[..., h] = bf16(sum_m out_grad[..., m, h]), fp32, m ascending.
HostTensor expand_to_mhc_bwd_ref(const HostTensor &out_grad);

// --- §3.2 sinkhorn_normalize -------------------------------------------------
/// fp32 `(..., n, n)`: row softmax + eps, a column normalisation, then
/// (repeat-1) x (row, column); every divisor is (sum + eps). repeat >= 1.
HostTensor sinkhorn_normalize_ref(const HostTensor &x, int repeat = 10,
                                  float eps = 1e-6f);
/// _SinkhornNormalize.backward: recomputes the forward from `x`.
HostTensor sinkhorn_normalize_bwd_ref(const HostTensor &grad_output,
                                      const HostTensor &x, int repeat = 10,
                                      float eps = 1e-6f);

// --- §3.3 mhc_pre_norm_fn ----------------------------------------------------
/// fn' = fn * normw, column-wise (_MHCFnNormwMerge forward).
HostTensor mhc_fn_normw_merge_ref(const HostTensor &mhc_fn,
                                  const HostTensor &mhc_norm_weight);
struct MhcFnNormwMergeGrads {
  HostTensor fn_grad;          ///< fn_grad_buf += out_fn_grad * normw
  HostTensor norm_weight_grad; ///< normw_grad_buf += sum_j out_fn_grad * fn
};
/// _MHCFnNormwMerge.backward; accumulates into the buffers when given
/// (parameter main_grad) and returns them, else into zeros.
MhcFnNormwMergeGrads mhc_fn_normw_merge_bwd_ref(
    const HostTensor &out_fn_grad, const HostTensor &mhc_fn,
    const HostTensor &mhc_norm_weight,
    std::optional<HostTensor> fn_grad_buf = std::nullopt,
    std::optional<HostTensor> norm_weight_grad_buf = std::nullopt);

struct MhcPreNormFnResult {
  HostTensor out;        ///< fp32 (..., mhc3) = mul * rsqrt(sq/Kd + eps)
  HostTensor fn_rounded; ///< fp32 (mhc3, Kd): TF32 value of fn (* normw)
  HostTensor mul;        ///< fp32 (..., mhc3): x . fn_rounded
  HostTensor sq;         ///< fp32 (...): sum of x^2 over the token
};
/// residual bf16 (..., mhc, H) with mhc <= 4, mhc_fn fp32 (mhc*(mhc+2),
/// mhc*H), optional normw fp32 (mhc*H,). n_splits >= 1 is accepted and has
/// no effect (the original forces one split); fuse_grad_acc only matters to
/// the backward (pass the buffer there).
MhcPreNormFnResult
mhc_pre_norm_fn_ref(const HostTensor &residual, const HostTensor &mhc_fn,
                    const std::optional<HostTensor> &mhc_norm_weight,
                    float mhc_norm_eps, bool fuse_grad_acc = true,
                    int n_splits = 16);
struct MhcPreNormFnGrads {
  /// nullopt when accumulated into `residual_grad_buf` (fuse_grad_acc).
  std::optional<HostTensor> residual_grad;
  HostTensor fn_grad; ///< gradient of the merged fn (straight-through TF32)
};
/// The backward of §3.3 from the saved tensors. x_grad is added to
/// `residual_grad_buf` in place (re-rounded to bf16) when given.
MhcPreNormFnGrads mhc_pre_norm_fn_bwd_ref(
    const HostTensor &out_grad, const HostTensor &residual,
    const HostTensor &fn_rounded, const HostTensor &mul, const HostTensor &sq,
    float mhc_norm_eps,
    std::optional<HostTensor> residual_grad_buf = std::nullopt);

// --- §3.4 mhc_pre_split_mixes ------------------------------------------------
struct MhcSplitMixes {
  HostTensor pre_mix;  ///< fp32 (..., mhc, 1)
  HostTensor post_mix; ///< fp32 (..., mhc, 1)
  HostTensor comb_mix; ///< fp32 (..., mhc, mhc), before Sinkhorn
};
MhcSplitMixes mhc_pre_split_mixes_ref(const HostTensor &input_mixes,
                                      const HostTensor &mhc_scale,
                                      const HostTensor &mhc_base, int mhc_mult,
                                      float mhc_post_mult_value,
                                      float mhc_pre_eps);
struct MhcSplitMixesGrads {
  HostTensor input_mixes_grad; ///< fp32 (..., mhc3)
  HostTensor mhc_scale_grad;   ///< fp32 (3,)
  HostTensor mhc_base_grad;    ///< fp32 (mhc3,)
};
MhcSplitMixesGrads mhc_pre_split_mixes_bwd_ref(
    const HostTensor &pre_mix_grad, const HostTensor &post_mix_grad,
    const HostTensor &comb_mix_grad, const HostTensor &input_mixes,
    const HostTensor &post_mix, const HostTensor &mhc_scale,
    const HostTensor &mhc_base, int mhc_mult, float mhc_post_mult_value);

// --- §3.5 mhc_pre_apply_mix --------------------------------------------------
/// bf16 (..., H) = bf16(fma chain over m of mix[m] * x[m, h]).
HostTensor mhc_pre_apply_mix_ref(const HostTensor &x, const HostTensor &mix,
                                 std::optional<HostTensor> out = std::nullopt);
struct MhcPreApplyMixGrads {
  std::optional<HostTensor> x_grad; ///< nullopt when added to x_grad_buf
  HostTensor mix_grad;              ///< fp32 (..., mhc, 1)
};
MhcPreApplyMixGrads
mhc_pre_apply_mix_bwd_ref(const HostTensor &out_grad, const HostTensor &x,
                          const HostTensor &mix,
                          std::optional<HostTensor> x_grad_buf = std::nullopt);

// --- §3.6 mhc_post -----------------------------------------------------------
/// out[o, h] = bf16(post[o]*x[h] + sum_i comb[i, o]*residual[i, h]).
HostTensor mhc_post_ref(const HostTensor &x, const HostTensor &residual,
                        const HostTensor &post_layer_mix,
                        const HostTensor &comb_res_mix,
                        std::optional<HostTensor> out = std::nullopt);
struct MhcPostGrads {
  HostTensor x_grad;              ///< bf16 (..., H)
  HostTensor residual_grad;       ///< bf16 (..., mhc, H)
  HostTensor post_layer_mix_grad; ///< fp32 (..., mhc, 1)
  HostTensor comb_res_mix_grad;   ///< fp32 (..., mhc, mhc)
};
/// Requires mhc == 4, as the original.
MhcPostGrads mhc_post_bwd_ref(const HostTensor &out_grad, const HostTensor &x,
                              const HostTensor &residual,
                              const HostTensor &post_layer_mix,
                              const HostTensor &comb_res_mix);

// --- §3.7 mhc_head_compute_mix -----------------------------------------------
/// fp32 (..., mhc): sigmoid(in*scale[0] + base[j]) + eps; scale (1,).
HostTensor mhc_head_compute_mix_ref(const HostTensor &input_mix,
                                    const HostTensor &mhc_scale,
                                    const HostTensor &mhc_base,
                                    float mhc_pre_eps);
struct MhcHeadComputeMixGrads {
  HostTensor input_mix_grad; ///< fp32 (..., mhc)
  HostTensor mhc_scale_grad; ///< fp32 (1,)
  HostTensor mhc_base_grad;  ///< fp32 (mhc,)
};
MhcHeadComputeMixGrads mhc_head_compute_mix_bwd_ref(const HostTensor &out_grad,
                                                    const HostTensor &input_mix,
                                                    const HostTensor &mhc_scale,
                                                    const HostTensor &mhc_base);

// --- §3.8 mhc_pre_big_fuse (inference) ---------------------------------------
struct MhcBigFuseResult {
  HostTensor post_mix;    ///< fp32 (..., mhc, 1)
  HostTensor comb_mix;    ///< fp32 (..., mhc, mhc), after Sinkhorn
  HostTensor layer_input; ///< bf16 (..., H)
};
/// Per token: norm_fn (no norm weight) -> split_mixes -> Sinkhorn(comb) ->
/// apply_mix(residual, pre); bit-identical to chaining those references.
MhcBigFuseResult mhc_pre_big_fuse_ref(const HostTensor &residual,
                                      const HostTensor &fn,
                                      const HostTensor &mhc_scale,
                                      const HostTensor &mhc_base, float rms_eps,
                                      float mhc_pre_eps, float mhc_sinkhorn_eps,
                                      float mhc_post_mult_value,
                                      int sinkhorn_repeat, int n_splits = 16);

/// TileKernels 2.1's mhc_pre_big_fuse_fwd (tk21_ops.md §6.4): the chain of
/// the references it fuses, mhc_reduce_partials_and_rmsnorm_fwd_ref (one
/// group of mhc * H) of gemm_out_mul fp32 (S, T, mhc3) and gemm_out_sqrsum
/// fp32 (S, T), mhc_pre_split_mixes_ref, sinkhorn_normalize_ref of the comb
/// part, mhc_pre_apply_mix_ref of residual bf16 (T, mhc, H) with the pre
/// part. post_mix fp32 (T, mhc), comb_mix fp32 (T, mhc * mhc), layer_input
/// bf16 (T, H).
MhcBigFuseResult mhc_pre_big_fuse_fwd_ref(
    const HostTensor &gemm_out_mul, const HostTensor &gemm_out_sqrsum,
    const HostTensor &mhc_scale, const HostTensor &mhc_base,
    const HostTensor &residual, float rms_eps, float mhc_pre_eps,
    float mhc_sinkhorn_eps, float mhc_post_mult_value, int sinkhorn_repeat);

/// The GEMM half of mhc_pre_norm_fn's backward (what 2.1 leaves to an
/// external GEMM after mhc_reduce_partials_and_rmsnorm_bwd): with mgr =
/// round_to_tf32(out_mul_grad) and fnr = round_to_tf32(fn), fn_grad[j, k] =
/// sum_t mgr[t, j] x[t, k] and x_grad[t, k] = bf16(x_grad_in + sum_j mgr[t,
/// j] fnr[j, k] + 2 x[t, k] sqrsum_grad[t]), float64 sums rounded once; x
/// bf16 (T, Kd), fn f32 (mhc3, Kd), out_mul_grad f32 (T, mhc3),
/// sqrsum_grad f32 (T,), x_grad_in the given bf16 (T, Kd) or zeros.
struct MhcNormFnGemmGrads {
  HostTensor x_grad;  ///< bf16 (T, Kd)
  HostTensor fn_grad; ///< f32 (mhc3, Kd)
};
MhcNormFnGemmGrads mhc_pre_norm_fn_gemm_bwd_ref(
    const HostTensor &out_mul_grad, const HostTensor &sqrsum_grad,
    const HostTensor &x, const HostTensor &fn,
    const std::optional<HostTensor> &x_grad = std::nullopt);

/// The split-K partials of mhc_pre_norm_fn's product that 2.1's
/// mhc_reduce_partials_and_rmsnorm_fwd and mhc_pre_big_fuse_fwd take
/// (TileKernels' mhc_pre_norm_fn_partials_ref, with the kernel's TF32 fn):
/// residual bf16 (T, mhc, H) as x (T, Kd), Kd = mhc H, in n_splits equal
/// contiguous parts (Kd % n_splits == 0), fn fp32 (R, Kd) (mhc_pre's R =
/// mhc3, mhc_head's mhc); mul fp32 (n_splits, T, R) =
/// the part's sum of x[t, k] * round_to_tf32(fn[j, k]), sq fp32 (n_splits,
/// T) = the part's sum of x^2, each in float64 rounded once.
struct MhcNormFnPartials {
  HostTensor mul, sq;
};
MhcNormFnPartials mhc_pre_norm_fn_partials_ref(const HostTensor &residual,
                                               const HostTensor &fn,
                                               int n_splits);

// --- §3.9 mhc_multilayer_recompute -------------------------------------------
/// Recomputes L layer inputs and P residuals (P in {L-1, L}) into the given
/// bf16 tensors, bit-identical to chaining apply_mix and post.
void mhc_multilayer_recompute_ref(
    const HostTensor &initial_residual,
    const std::vector<HostTensor> &pre_mix_list,
    const std::vector<HostTensor> &layer_output_list,
    const std::vector<HostTensor> &post_mix_list,
    const std::vector<HostTensor> &comb_mix_list,
    const std::vector<HostTensor> &layer_input_list,
    const std::vector<HostTensor> &residual_list);

// --- TileKernels 2.1: mhc_reduce_partials_and_rmsnorm (tk21_ops.md §6.2) ---
struct MhcReducePartialsResult {
  HostTensor out_mul; ///< fp32 (T, G, N3): the splits' sum
  HostTensor sqrsum;  ///< fp32 (T, G)
  HostTensor out;     ///< fp32 (T, N3): sum over groups of out_mul * rms
};
/// The split-K partials out_mul_splitted fp32 (n_splits, T, G, N3) and
/// sqrsum_splitted fp32 (n_splits, T, G) added in split order (f32), and out
/// = fmaf(out_mul, 1 / sqrt(sqrsum / rms_group_size + rms_eps), out) group
/// by group (the kernel's rsqrtf: a tolerance).
MhcReducePartialsResult
mhc_reduce_partials_and_rmsnorm_fwd_ref(const HostTensor &out_mul_splitted,
                                        const HostTensor &sqrsum_splitted,
                                        int64_t rms_group_size, float rms_eps);
struct MhcReducePartialsGrads {
  HostTensor out_mul_grad; ///< fp32 (T, G, N3) = out_grad * rms
  HostTensor sqrsum_grad;  ///< fp32 (T, G)
};
/// The backward: out_mul_grad = out_grad * r, sqrsum_grad = (sum_j out_grad
/// * out_mul) * r / (sqrsum + C) / -2 with r the forward's factor and C =
/// fl32(rms_eps * rms_group_size in float64). out_grad fp32 (T, N3), out_mul
/// fp32 (T, G, N3), sqrsum fp32 (T, G).
MhcReducePartialsGrads mhc_reduce_partials_and_rmsnorm_bwd_ref(
    const HostTensor &out_grad, const HostTensor &out_mul,
    const HostTensor &sqrsum, int64_t rms_group_size, float rms_eps);

} // namespace tilejit::mhc
