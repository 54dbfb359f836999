// swiglu_forward_and_per_token_cast_21.h - TileKernels 2.1's argument form
// of swiglu_forward_and_per_token_cast (shared/specs/tk21_ops.md §3.8): the
// psum row layout and a weight a row; declared in
// swiglu_forward_and_per_token_cast_21.cpp on the 1.0 form's kernel, the
// CPU reference is swiglu_forward_and_per_token_cast_21_ref in
// reference.h.
#pragma once

#include "op/op_def.h"

#include <optional>

namespace tilejit::quant {

/// TileKernels 2.1's swiglu_forward_and_per_token_cast: swiglu_forward's
/// f32 activation of x (T, 2H) bf16 or f32 (valid rows of the psum layout
/// given by psum_num_tokens_per_expert, i32 (E,); topk_weights f32 (T,)
/// times routed_scaling_factor; clamp_value counted into i64 clamped_count
/// (4,): l > c, r > c, r < -c, valid rows x H), cast per token to e4m3
/// out (T, H) in groups of num_per_channels (32 or 128), out_sf in §3.3's
/// layouts. Rows that are not valid are written as quantized zeros
/// (TileKernels leaves them unwritten). Absent optional tensors are
/// ops::absent(). Exact against the reference. Throws UserError naming the
/// argument, its value and the requirement; nothing is written then.
void swiglu_forward_and_per_token_cast_21(
    const rt::TensorView &x, int64_t num_per_channels,
    const rt::TensorView &psum_num_tokens_per_expert,
    const rt::TensorView &topk_weights, const rt::TensorView &out,
    const rt::TensorView &out_sf, const rt::TensorView &clamped_count,
    std::optional<float> routed_scaling_factor = std::nullopt,
    bool use_tma_aligned_col_major_sf = false, bool round_sf = false,
    bool use_packed_ue8m0 = false,
    std::optional<float> clamp_value = std::nullopt,
    int64_t token_alignment = 128, CUstream stream = nullptr);

const ops::OpDef &swiglu_forward_and_per_token_cast_21_op();

} // namespace tilejit::quant
