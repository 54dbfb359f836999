// swiglu_forward_and_per_token_cast.h - SwiGLU's forward fused with a
// per-token fp8 e4m3 cast of its f32 activation (shared/specs/
// quant_transpose.md §11.1); declared in
// swiglu_forward_and_per_token_cast.cpp, the CPU reference is
// swiglu_forward_and_per_token_cast_ref in reference.h.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"
#include "quant/per_token_cast.h"
#include "quant/reference.h"
#include "quant/scale_layout.h"

#include <optional>

namespace tilejit::quant {

/// Static parameters of a swiglu_forward_and_per_token_cast kernel: the
/// per_token_cast box tiling of the (E, H) activation (cast()) and what
/// the SwiGLU before it takes; also the bytewise key (32-bit fields).
struct SwigluForwardCastSpec {
  DType in_dtype = DType::bf16;
  int32_t group = 128;   ///< num_per_channels, or H padded (cast())
  int32_t block_m = 8;   ///< rows of a tile
  int32_t block_k = 512; ///< columns of a tile
  int32_t threads = 128;
  int32_t round_sf = 0;
  SfLayout sf_layout = SfLayout::row_major;
  int32_t vector_bytes = 0; ///< 16 where x's rows are aligned, else 0
  int32_t inside = 0;       ///< a tile is one whole row: no bounds checks
  /// 1: rows weighted by topk_weights.flat[pos_to_token_topk[r]] (0 for
  /// a negative index)
  int32_t weights = 0;
  int32_t pos_to_expert = 0; ///< 1: rows with pos_to_expert < 0 are zero
  int32_t clamp = 0;         ///< 1: swiglu_clamp_value (a kernel scalar) clamps
  int32_t count = 0;         ///< 1: the clamps are counted into clamped_count
  uint32_t sf_clamp_min = 0; ///< f32 bits of the absmax clamp; 0: 1e-4
  // TileKernels 2.1's form (swiglu_forward_and_per_token_cast_21):
  int32_t psum = 0;        ///< 1: rows outside the psum layout are zero
  int32_t experts = 0;     ///< with psum: see psum_valid (psum_dsl.h)
  int32_t alignment = 128; ///< token_alignment
  /// 1: rows weighted by topk_weights[r] * routed_scaling_factor (a kernel
  /// scalar), the weights one a row
  int32_t row_weights = 0;
  /// 1: 2.1's form: its parameter names, and a fourth count, valid rows x
  /// H
  int32_t tk21 = 0;
  /// The per_token_cast spec of the activation's cast.
  PerTokenCastSpec cast() const;
  /// Elements of a vector of the kernel's layout: 16 bytes of in_dtype, or
  /// 1 without vectors.
  int64_t row_vector() const {
    return vector_bytes ? vector_bytes / static_cast<int64_t>(size_of(in_dtype))
                        : 1;
  }
  /// Whether a tile is one row of whole rounds of threads x row_vector():
  /// then the kernel takes per-row values as (E, threads, 1) views, one a
  /// thread; else as (E, copies).
  /// (2.1's per-row values are always (E, copies).)
  bool row_by_thread() const {
    return block_m == 1 && block_k % (threads * row_vector()) == 0 && !tk21;
  }
};
TILEJIT_SPEC_FIELDS(SwigluForwardCastSpec, in_dtype, group, block_m, block_k,
                    threads, round_sf, sf_layout, vector_bytes, inside, weights,
                    pos_to_expert, clamp, count, sf_clamp_min, psum, experts,
                    alignment, row_weights, tk21)

/// The SwiGLU casts' tiling of the (E, H) activation in groups of `group`
/// (swiglu_forward_and_per_token_cast.cpp).
PerTokenCastSpec swiglu_tiling(DType in, int64_t e, int64_t h, int64_t group);

/// TileKernels' swiglu_forward_and_per_token_cast: x (E, 2H) bf16 or f32,
/// contiguous, H % 128 == 0, is (gate g | up u); per row r and column c <
/// H, with a clamp C (> 0; nullopt: none) g = min(g, C), u = clamp(u, -C,
/// C) (counted before, in i64 clamped_count (3,), added to: g > C, u > C,
/// u < -C); act = (g / (1 + expf(-g))) * u, times
/// topk_weights.flat[pos_to_token_topk[r]] when pos_to_token_topk (i32
/// (E,)) is passed (0 for a negative index; an index past topk_weights
/// reads 0); rows with pos_to_expert[r] < 0 are zero and not counted.
/// Then per_token_cast of the f32 act: e4m3 out (E, H), groups of
/// num_per_channels (128, or H up to 8192), out_sf in §3.3's layouts
/// (column-major only with groups of 128); `sf_clamp_min` replaces the
/// absmax clamp 1e-4. Absent optional tensors are ops::absent(). Exact
/// against the reference. Throws UserError naming the argument, its value
/// and the requirement; nothing is written then.
void swiglu_forward_and_per_token_cast(
    const rt::TensorView &x, int64_t num_per_channels,
    const rt::TensorView &pos_to_token_topk, const rt::TensorView &topk_weights,
    const rt::TensorView &pos_to_expert, const rt::TensorView &out,
    const rt::TensorView &out_sf, const rt::TensorView &clamped_count,
    bool use_tma_aligned_col_major_sf = false, bool round_sf = false,
    bool use_packed_ue8m0 = false,
    std::optional<float> swiglu_clamp_value = std::nullopt,
    std::optional<float> sf_clamp_min = std::nullopt,
    CUstream stream = nullptr);

const ops::OpDef &swiglu_forward_and_per_token_cast_op();

/// The kernel in the DSL (swiglu_forward_and_per_token_cast.dsl.cpp).
Kernel
swiglu_forward_and_per_token_cast_kernel(const SwigluForwardCastSpec &spec);

} // namespace tilejit::quant
