// swiglu_backward.h - TileKernels 2.1's plain swiglu_backward on the psum
// row layout (shared/specs/tk21_ops.md §3.9); declared in
// swiglu_backward.cpp, the CPU reference is swiglu_backward_ref in
// reference.h.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"
#include "quant/reference.h"

#include <optional>

namespace tilejit::quant {

/// Static parameters of a swiglu_backward kernel (also the bytewise key:
/// 32-bit fields). A block takes one row in chunks of threads x vector
/// columns of each half.
struct SwigluBackwardSpec {
  DType in_dtype = DType::bf16;   ///< e4m3: x_group's scales dequantize x
  DType grad_dtype = DType::bf16; ///< act_x_grad's
  DType out_dtype = DType::bf16;
  int32_t threads = 64;
  int32_t vector = 8;      ///< elements a thread of a chunk
  int32_t psum = 0;        ///< 1: padding rows of the psum layout are zeros
  int32_t experts = 0;     ///< with psum: E up to a power of two (see spec)
  int32_t alignment = 128; ///< token_alignment
  int32_t weights = 0;     ///< 1: topk_weights[t] * rsf, and weight_grad
  int32_t clamp = 0;       ///< 1: clamp_value (a kernel scalar) clamps
  int32_t recompute = 0;   ///< 1: act_out
  int32_t vector_bytes = 0;
  int32_t x_group = 0;    ///< e4m3 x: the columns of one of x_sf's scales
  int32_t cast_group = 0; ///< > 0: x_grad also cast to e4m3 in such groups
  int32_t round_sf = 0;   ///< with cast_group: §3.3's flags
  SfLayout sf_layout = SfLayout::row_major;
  int64_t chunk() const { return int64_t{threads} * vector; }
};
TILEJIT_SPEC_FIELDS(SwigluBackwardSpec, in_dtype, grad_dtype, out_dtype,
                    threads, vector, psum, experts, alignment, weights, clamp,
                    recompute, vector_bytes, x_group, cast_group, round_sf,
                    sf_layout)

/// TileKernels 2.1's swiglu_backward: x (T, 2H) bf16 or f32, contiguous,
/// H % 64 == 0, is (l | r); act_x_grad (T, H) of x's dtype is the gradient
/// of SwiGLU's output. Per row t that is not psum padding (without
/// psum_num_tokens_per_expert, i32 (E,), none is; with it, the rows
/// [psum[e], align(psum[e], token_alignment)) of each e are) and column j
/// < H: with a clamp c (> 0; nullopt: none) cl = l > c and cr = |r| > c
/// before l = min(l, c), r = clamp(r, -c, c); g = act_x_grad[t, j], w =
/// topk_weights[t] * routed_scaling_factor (f32 (T,); the factor requires
/// them; 1 without), den = 1 + expf(-l), s = 1 / den, gs = g * w * s; x_grad
/// (T, 2H) in `fmt` ('bf16' or 'fp32') = (cl ? 0 : (gs * r) * fma(l, 1 -
/// s, 1) | cr ? 0 : gs * l); act = silu * r with silu l / den by one Newton
/// step from l * s; act_out (T, H) in fmt = act * w (when given: do_recompute);
/// weight_grad (T,) f32 = rsf * the sum over j of g * act (when weights are
/// given; in no particular order). Every output of a padding row is 0.
/// Absent optional tensors are ops::absent(). Throws UserError naming the
/// argument, its value and the requirement; nothing is written then.
void swiglu_backward(const rt::TensorView &x, const rt::TensorView &act_x_grad,
                     const rt::TensorView &psum_num_tokens_per_expert,
                     const rt::TensorView &topk_weights,
                     const rt::TensorView &x_grad,
                     const rt::TensorView &weight_grad,
                     const rt::TensorView &act_out,
                     std::optional<float> routed_scaling_factor = std::nullopt,
                     std::optional<float> clamp_value = std::nullopt,
                     int64_t token_alignment = 128, CUstream stream = nullptr);

const ops::OpDef &swiglu_backward_op();

/// What swiglu_backward and its FP8 form share (swiglu_backward.cpp): the
/// checks of the psum, weight and clamp arguments; the tiling of a call
/// (plain: no x_group or cast_group); the views of x, x_grad, psum and the
/// weights (x_grad's as its halves "x_grad_l", "x_grad_r").
void check_swiglu_backward_args(const ops::Call &c);
SwigluBackwardSpec swiglu_backward_spec(const ops::Call &c);
void swiglu_backward_views(const ops::Call &c, const SwigluBackwardSpec &s,
                           ops::KernelArgs &args);

/// The kernel in the DSL (swiglu_backward.dsl.cpp).
Kernel swiglu_backward_kernel(const SwigluBackwardSpec &spec);

} // namespace tilejit::quant
