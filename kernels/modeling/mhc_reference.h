// mhc_reference.h - CPU reference of the mHC functional layer
// (tile_kernels.modeling.mhc, shared/specs/moe_engram_mhc.md §3.10): forward
// and backward of expand_from_embedding, mhc_pre, mhc_post and mhc_head, with
// the residual-gradient sharing protocol made explicit as a registry.
//
// A layer step:      residual -> mhc_pre -> (layer_input, post, comb)
//                    y = F(layer_input); new = mhc_post(y, residual, post,
//                    comb)
// Backward order:    mhc_post_bwd_ref (installs residual's gradient buffer)
//                    -> F' -> mhc_pre_bwd_ref (adds apply_mix's, then
//                    norm_fn's part to that buffer in place and removes it).
#pragma once

#include "common/host_tensor.h"
#include "mhc/reference.h"

#include <cstddef>
#include <map>
#include <optional>

namespace tilejit::modeling {

using ref::HostTensor;

/// The side channel of the original's `residual.untyped_storage().
/// grad_from_mhc_post`: at most one bf16 gradient buffer per residual, keyed
/// by the address of the residual's first element.
class MhcResidualGradRegistry {
public:
  /// Sets the buffer of `residual`, replacing any earlier one (as the
  /// original's attribute assignment does).
  void install(const HostTensor &residual, const HostTensor &grad);
  /// The buffer (sharing storage), or nullopt.
  std::optional<HostTensor> find(const HostTensor &residual) const;
  void erase(const HostTensor &residual);
  std::size_t size() const { return buffers_.size(); }

private:
  std::map<const std::byte *, HostTensor> buffers_;
};

/// expand_to_mhc: bf16 (..., H) -> (..., mhc_mult, H).
HostTensor expand_from_embedding_ref(const HostTensor &x, int mhc_mult = 4);
HostTensor expand_from_embedding_bwd_ref(const HostTensor &out_grad);

// --- mhc_pre -----------------------------------------------------------------
/// The keyword arguments of mhc_pre, in the original's order and defaults:
///   mhc_pre_ref(r, fn, scale, base, {.norm_weight = w, .post_mult_value = 2})
struct MhcPreKwargs {
  std::optional<HostTensor> norm_weight;
  float norm_eps = 1e-6f;
  int mhc_mult = 4;
  float post_mult_value = 1.0f;
  float pre_eps = 1e-6f;
  float sinkhorn_eps = 1e-6f;
  int sinkhorn_repeat = 10;
  int n_splits = 16;
};
/// What the autograd graph of mhc_pre keeps for the backward.
struct MhcPreContext {
  HostTensor residual, fn, scale, base;
  MhcPreKwargs kwargs;
  mhc::MhcPreNormFnResult norm; ///< norm.out are the mhc3 mixes
  mhc::MhcSplitMixes split;     ///< pre, post and the comb logits
};
struct MhcPreOutput {
  HostTensor layer_input;           ///< bf16 (..., H)
  HostTensor post_mix;              ///< fp32 (..., mhc, 1)
  HostTensor comb_mix;              ///< fp32 (..., mhc, mhc)
  std::optional<MhcPreContext> ctx; ///< set when grad_enabled
};
/// norm_fn -> split_mixes -> Sinkhorn(comb) -> apply_mix(residual, pre). With
/// grad_enabled = false it runs mhc_pre_big_fuse on fn * norm_weight (the
/// original drops norm_weight there; both modes agree here).
MhcPreOutput mhc_pre_ref(const HostTensor &residual, const HostTensor &fn,
                         const HostTensor &scale, const HostTensor &base,
                         const MhcPreKwargs &kwargs = {},
                         bool grad_enabled = true);
struct MhcPreGrads {
  /// nullopt when added to the registry's buffer for the residual (the
  /// buffer mhc_post_bwd_ref returned then holds the total).
  std::optional<HostTensor> residual_grad;
  HostTensor fn_grad, scale_grad, base_grad;
  std::optional<HostTensor> norm_weight_grad; ///< when norm_weight was given
};
/// Backward of mhc_pre: Sinkhorn and apply_mix, split_mixes, norm_fn, merge.
/// apply_mix then norm_fn add to the residual's buffer when the registry has
/// one (norm_fn removes it); otherwise they accumulate into a fresh buffer
/// that is returned as residual_grad.
MhcPreGrads mhc_pre_bwd_ref(const MhcPreContext &ctx,
                            const HostTensor &layer_input_grad,
                            const HostTensor &post_mix_grad,
                            const HostTensor &comb_mix_grad,
                            MhcResidualGradRegistry &registry);

// --- mhc_post ----------------------------------------------------------------
/// The op of §3.6 (mhc::mhc_post_ref).
HostTensor mhc_post_ref(const HostTensor &x, const HostTensor &residual,
                        const HostTensor &post_layer_mix,
                        const HostTensor &comb_res_mix);
/// MHCPost.backward; with fuse_grad_acc the returned residual_grad is also
/// installed as the residual's buffer.
mhc::MhcPostGrads
mhc_post_bwd_ref(const HostTensor &out_grad, const HostTensor &x,
                 const HostTensor &residual, const HostTensor &post_layer_mix,
                 const HostTensor &comb_res_mix,
                 MhcResidualGradRegistry &registry, bool fuse_grad_acc = true);

// --- mhc_head ----------------------------------------------------------------
struct MhcHeadKwargs {
  std::optional<HostTensor> norm_weight;
  float norm_eps = 1e-6f;
  int mhc_mult = 4;
  float pre_eps = 1e-6f;
  int n_splits = 16;
};
struct MhcHeadContext {
  HostTensor residual, fn_padded, scale, base; ///< scale as (1,)
  std::optional<HostTensor> norm_weight;
  MhcHeadKwargs kwargs;
  mhc::MhcPreNormFnResult norm;
  HostTensor input_mix; ///< fp32 (..., mhc): the first mhc mixes
  HostTensor mix;       ///< fp32 (..., mhc, 1): head_compute_mix output
  bool scale_is_scalar = false;
};
struct MhcHeadOutput {
  HostTensor out; ///< bf16 (..., H)
  MhcHeadContext ctx;
};
/// fn (mhc, mhc*H) zero-padded to mhc*(mhc+2) rows -> norm_fn -> first mhc
/// mixes -> head_compute_mix -> apply_mix. scale is (1,) or a scalar.
MhcHeadOutput mhc_head_ref(const HostTensor &residual, const HostTensor &fn,
                           const HostTensor &scale, const HostTensor &base,
                           const MhcHeadKwargs &kwargs = {});
struct MhcHeadGrads {
  std::optional<HostTensor> residual_grad; ///< as MhcPreGrads
  HostTensor fn_grad;                      ///< (mhc, mhc*H)
  HostTensor scale_grad;                   ///< scale's shape
  HostTensor base_grad;
  std::optional<HostTensor> norm_weight_grad;
};
/// Backward of mhc_head; uses the registry's buffer only when one exists
/// (the original's head always expects one).
MhcHeadGrads mhc_head_bwd_ref(const MhcHeadContext &ctx,
                              const HostTensor &out_grad,
                              MhcResidualGradRegistry &registry);

} // namespace tilejit::modeling
