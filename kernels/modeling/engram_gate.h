// engram_gate.h - The Engram gate layer on the GPU (TileKernels'
// EngramGateFn, shared/specs/moe_engram_mhc.md §2.6, 2.1's image tokens):
// its forward and backward composed of the Engram ops, on the caller's
// memory and stream. The leading dimensions are flattened by the caller:
// x and k (T, hc, D), v (T, D). CPU reference: engram_gate_reference.h.
#pragma once

#include "op/op_def.h"

#include "tilejit/runtime/tensor.h"

#include <cuda.h>

namespace tilejit::modeling {

/// What the forward saves for the backward, in the caller's f32 memory:
/// weight_fused (hc, D) and dot, gate_score, rstd_x, rstd_k (T, hc), all
/// contiguous.
struct EngramGateSavedViews {
  rt::TensorView weight_fused, dot, gate_score, rstd_x, rstd_k;
};

/// out = x + sigmoid(signed sqrt of the RMS-normalised, weighted x.k /
/// sqrt(D)) * v: weight_fused = fused_weight(weight_hidden,
/// weight_embed), then engram_gate_fwd saving dot, gate_score and the
/// rstds. x bf16 (T, hc, D) contiguous; k bf16 (T, hc, D) and v bf16 (T, D)
/// with unit last strides (2.1's kv: its views); the weights bf16 (hc, D);
/// out bf16 (T, hc, D), not x (the backward reads x). An image token
/// (image_token_mask, bool (T,), or ops::absent()) keeps its x. Throws the
/// ops' UserErrors (naming the op and argument) before any launch.
void engram_gate_forward(
    const rt::TensorView &x, const rt::TensorView &k, const rt::TensorView &v,
    const rt::TensorView &weight_hidden, const rt::TensorView &weight_embed,
    const rt::TensorView &out, const EngramGateSavedViews &saved,
    float clamp_value, float eps, CUstream stream,
    const rt::TensorView &image_token_mask = ops::absent());

/// The gradients: engram_gate_bwd writes grad_x (bf16 (T, hc, D)
/// contiguous), grad_k and grad_v (bf16, k's and v's shapes, unit last
/// strides: 2.1's grad_kv views) and the partial weight gradients of its
/// persistent blocks into grad_w_partial (f32 (B, hc, D), B a multiple of 4:
/// the SMs, say); grad_w_reduce then adds them times the other weight into
/// grad_weight_hidden and grad_weight_embed (f32 (hc, D), accumulated in
/// place: the parameters' main_grad, or zeros). hc must be 4 and D a
/// multiple of 512.
void engram_gate_backward(
    const rt::TensorView &grad_out, const rt::TensorView &x,
    const rt::TensorView &k, const rt::TensorView &v,
    const rt::TensorView &weight_hidden, const rt::TensorView &weight_embed,
    const EngramGateSavedViews &saved, const rt::TensorView &grad_x,
    const rt::TensorView &grad_k, const rt::TensorView &grad_v,
    const rt::TensorView &grad_w_partial,
    const rt::TensorView &grad_weight_hidden,
    const rt::TensorView &grad_weight_embed, float clamp_value, CUstream stream,
    const rt::TensorView &image_token_mask = ops::absent());

} // namespace tilejit::modeling
