// swiglu_backward_and_per_token_cast.h - SwiGLU's backward of a per-token
// e4m3 input, with the gradient cast per token to e4m3 and the routing
// weights' gradient (shared/specs/quant_transpose.md §11.2); declared in
// swiglu_backward_and_per_token_cast.cpp, the CPU reference is
// swiglu_backward_and_per_token_cast_ref in reference.h.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"
#include "quant/reference.h"

#include <optional>

namespace tilejit::quant {

/// Static parameters of a swiglu_backward_and_per_token_cast kernel (also
/// the bytewise key: 32-bit fields). A block takes one row in chunks of
/// `threads` x `vector` columns of each half, `vector` a thread.
struct SwigluBackwardCastSpec {
  int32_t group = 128; ///< num_per_channels: 32 or 128
  int32_t threads = 64;
  int32_t vector = 8; ///< elements a thread of a chunk
  int32_t round_sf = 0;
  int32_t clamp = 0;   ///< 1: swiglu_clamp_value (a kernel scalar) clamps
  int32_t aligned = 0; ///< 1: rows start at 16 bytes: vector accesses
  int64_t chunk() const { return int64_t{threads} * vector; }
};
TILEJIT_SPEC_FIELDS(SwigluBackwardCastSpec, group, threads, vector, round_sf,
                    clamp, aligned)

/// TileKernels' swiglu_backward_and_per_token_cast: x (E, 2H) e4m3 with
/// f32 scales x_sf (E, 2H / bk), bk = num_per_channels (32 or 128, H % bk
/// == 0), is (gate | up); grad_out bf16 (E, H); weight f32 (T, K);
/// pos_to_token_topk i32 (E,) flat indices into weight (-1: padding) and
/// token_topk_to_pos i32 (T, K) its inverse. Per row r with w =
/// weight.flat[pos_to_token_topk[r]] (0 for padding) and column c < H:
/// g, u dequantized and clamped by C (> 0; nullopt: none), t = 1 +
/// expf(-g), act = (g / t) * u, s = 1 / t, gws = (go * w) * s; out = bf16(act
/// * w); dg = (gws * u) * fma(g, 1 - s, 1) (0 where g was clamped), du =
/// gws * g (0 where u was); x_grad = bf16(dg | du); x_grad_fp8 and
/// x_grad_sf the (1, bk) e4m3 cast of the f32 dg | du (round_sf: powers of
/// two); weight_grad.flat[pos_to_token_topk[r]] = sum over c of go * act
/// (f32, in no particular order), and 0 where token_topk_to_pos is -1;
/// other entries are left as they were. A mapping with two rows of one
/// index writes it in no defined order. Throws UserError naming the
/// argument, its value and the requirement; nothing is written then.
void swiglu_backward_and_per_token_cast(
    const rt::TensorView &x, const rt::TensorView &x_sf,
    const rt::TensorView &grad_out, const rt::TensorView &weight,
    const rt::TensorView &pos_to_token_topk,
    const rt::TensorView &token_topk_to_pos, const rt::TensorView &out,
    const rt::TensorView &x_grad_fp8, const rt::TensorView &x_grad_sf,
    const rt::TensorView &x_grad, const rt::TensorView &weight_grad,
    int64_t num_per_channels, bool round_sf = false,
    std::optional<float> swiglu_clamp_value = std::nullopt,
    CUstream stream = nullptr);

const ops::OpDef &swiglu_backward_and_per_token_cast_op();

/// The kernel in the DSL (swiglu_backward_and_per_token_cast.dsl.cpp).
Kernel
swiglu_backward_and_per_token_cast_kernel(const SwigluBackwardCastSpec &spec);

} // namespace tilejit::quant
