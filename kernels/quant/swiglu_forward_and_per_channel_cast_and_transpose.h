// swiglu_forward_and_per_channel_cast_and_transpose.h - SwiGLU's forward
// rounded to bf16, cast per channel to e4m3 and written transposed
// (shared/specs/quant_transpose.md §11.3); declared in
// swiglu_forward_and_per_channel_cast_and_transpose.cpp on
// per_channel_cast's kernel, the CPU reference is
// swiglu_forward_and_per_channel_cast_and_transpose_ref in reference.h.
#pragma once

#include "op/op_def.h"

#include <optional>
#include <string_view>

namespace tilejit::quant {

/// TileKernels' swiglu_forward_and_per_channel_cast_and_transpose: x a
/// contiguous bf16 (M, 2H) = (gate | up), M % 128 == 0, 2H % 128 == 0; a =
/// bf16((g / (1 + expf(-g))) * u) after g = min(g, C), u = clamp(u, -C, C)
/// in f32 (C > 0; nullopt: none); per num_per_tokens (32 or 128) rows of a
/// column: amax, §3.2 (round_sf), e4m3(a * sf_inv). out e4m3 (H, M), or
/// (M, H) with without_transpose; out_sf f32 (M / num_per_tokens, H)
/// row-major. `fmt` must be "e4m3". Exact against the reference. Throws
/// UserError naming the argument, its value and the requirement; nothing is
/// written then.
void swiglu_forward_and_per_channel_cast_and_transpose(
    const rt::TensorView &x, std::string_view fmt, int64_t num_per_tokens,
    const rt::TensorView &out, const rt::TensorView &out_sf,
    bool round_sf = false, bool without_transpose = false,
    std::optional<float> swiglu_clamp_value = std::nullopt,
    CUstream stream = nullptr);

const ops::OpDef &swiglu_forward_and_per_channel_cast_and_transpose_op();

} // namespace tilejit::quant
