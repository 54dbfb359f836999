// swiglu_backward_and_per_token_cast_21.h - TileKernels 2.1's FP8
// swiglu_backward_and_per_token_cast (shared/specs/tk21_ops.md §3.9): the
// plain backward's psum row layout over an e4m3 x, its gradient also cast
// per token to e4m3; declared in swiglu_backward_and_per_token_cast_21.cpp
// on swiglu_backward's kernel, the CPU reference is
// swiglu_backward_and_per_token_cast_21_ref in reference.h. (2.1's plain
// form, a bf16 or f32 x, is swiglu_backward; 1.0's form is
// swiglu_backward_and_per_token_cast.)
#pragma once

#include "op/op_def.h"

#include <optional>

namespace tilejit::quant {

/// TileKernels 2.1's swiglu_backward_and_per_token_cast of an FP8 x: x e4m3
/// (T, 2H), H % 64 == 0, contiguous, with f32 row-major scales x_sf (T, 2H /
/// bk), bk 32 or 128 dividing H; act_x_grad bf16 or f32 (T, H). The
/// dequantized x (an f32 product) goes through swiglu_backward (psum
/// padding rows, topk_weights times routed_scaling_factor, clamp_value,
/// weight_grad, act_out: see there) with bf16 x_grad and act_out; the f32
/// gradient (not the rounded one) is cast per token to e4m3 x_grad_fp8 (T,
/// 2H) in groups of num_per_channels (32 or 128, dividing H; amax clamp
/// 1e-4), scales x_grad_sf (T, 2H / num_per_channels) in §3.3's layouts, 0
/// on padding rows; packed scales require H % (4 num_per_channels) == 0
/// (TileKernels' hidden sizes all do; see the .cpp). Absent optional tensors
/// are ops::absent(). Throws UserError naming the argument, its value and the
/// requirement; nothing is written then.
void swiglu_backward_and_per_token_cast_21(
    const rt::TensorView &x, const rt::TensorView &x_sf,
    const rt::TensorView &act_x_grad, int64_t num_per_channels,
    const rt::TensorView &psum_num_tokens_per_expert,
    const rt::TensorView &topk_weights, const rt::TensorView &x_grad,
    const rt::TensorView &x_grad_fp8, const rt::TensorView &x_grad_sf,
    const rt::TensorView &weight_grad, const rt::TensorView &act_out,
    std::optional<float> routed_scaling_factor = std::nullopt,
    bool use_tma_aligned_col_major_sf = false, bool round_sf = false,
    bool use_packed_ue8m0 = false,
    std::optional<float> clamp_value = std::nullopt,
    int64_t token_alignment = 128, CUstream stream = nullptr);

const ops::OpDef &swiglu_backward_and_per_token_cast_21_op();

} // namespace tilejit::quant
