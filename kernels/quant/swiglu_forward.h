// swiglu_forward.h - TileKernels 2.1's plain swiglu_forward on the psum row
// layout (shared/specs/tk21_ops.md §3.8); declared in swiglu_forward.cpp,
// the CPU reference is swiglu_forward_ref in reference.h.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

#include <optional>

namespace tilejit::quant {

/// Static parameters of a swiglu_forward kernel (also the bytewise key:
/// 32-bit fields). A block takes block_m rows in chunks of columns() of
/// each half, `vector` elements a thread.
struct SwigluForwardSpec {
  DType in_dtype = DType::bf16;
  DType out_dtype = DType::bf16;
  int32_t block_m = 2;
  int32_t threads = 128;
  int32_t vector = 8;
  int32_t psum = 0;        ///< 1: rows outside the psum layout are not written
  int32_t experts = 0;     ///< with psum: E up to a power of two >= threads
  int32_t alignment = 128; ///< token_alignment
  int32_t weights = 0;     ///< 1: rows times topk_weights[t] * rsf
  int32_t clamp = 0;       ///< 1: clamp_value (a kernel scalar) clamps
  int32_t count = 0;       ///< 1: the clamps are counted into clamped_count
  int32_t pack = 0;        ///< 1: two counts an i32 (block_m x H < 2^16 each)
  int32_t vector_bytes = 0;
  int64_t columns() const { return int64_t{threads} * vector / block_m; }
};
TILEJIT_SPEC_FIELDS(SwigluForwardSpec, in_dtype, out_dtype, block_m, threads,
                    vector, psum, experts, alignment, weights, clamp, count,
                    pack, vector_bytes)

/// TileKernels 2.1's swiglu_forward: x (T, 2H) bf16 or f32, contiguous,
/// H % 64 == 0, is (gate l | value r); per valid row t (every row without
/// psum_num_tokens_per_expert; with it, i32 (E,), the rows [align(psum[e -
/// 1], token_alignment), psum[e]) of each expert e) and column j < H: with
/// a clamp c (> 0; nullopt: none) l = min(l, c) and r = clamp(r, -c, c)
/// (counted before into i64 clamped_count (4,): l > c, r > c, r < -c, and
/// the valid rows x H); a = l / (1 + expf(-l)) * r, times topk_weights[t]
/// * routed_scaling_factor (f32 (T,); the factor requires the weights);
/// out (T, H) in `fmt` ('bf16', round to nearest even, or 'fp32'). Rows
/// that are not valid are not written. Absent optional tensors are
/// ops::absent(). Exact against the reference. Throws UserError naming the
/// argument, its value and the requirement; nothing is written then.
void swiglu_forward(const rt::TensorView &x,
                    const rt::TensorView &psum_num_tokens_per_expert,
                    const rt::TensorView &topk_weights,
                    const rt::TensorView &out,
                    const rt::TensorView &clamped_count,
                    std::optional<float> routed_scaling_factor = std::nullopt,
                    std::optional<float> clamp_value = std::nullopt,
                    int64_t token_alignment = 128, CUstream stream = nullptr);

const ops::OpDef &swiglu_forward_op();

/// The kernel in the DSL (swiglu_forward.dsl.cpp).
Kernel swiglu_forward_kernel(const SwigluForwardSpec &spec);

} // namespace tilejit::quant
