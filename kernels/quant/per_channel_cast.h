// per_channel_cast.h - Column-wise (bm x 1) fp8 e4m3 quantization, straight
// or transposed (shared/specs/quant_transpose.md §10.1, §10.3); declared in
// per_channel_cast.cpp, the CPU references are per_channel_cast_ref and
// per_channel_cast_and_transpose_ref in reference.h.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

#include <string_view>

namespace tilejit::quant {

/// Quantizes a contiguous bf16 or f32 x (M, K), M % 128 == 0, K % 64 == 0,
/// to e4m3 with one scale per column per `num_per_tokens` (bm) rows, 128
/// (or 32, TileKernels 2.1): amax over the block's rows, §3.2 (`round_sf`),
/// out = e4m3(x * sf_inv). out: e4m3 (M, K); out_sf: f32 (M / bm, K)
/// row-major. Exact against the reference. Throws UserError naming the
/// argument, its value and the requirement; nothing is written then.
void per_channel_cast(const rt::TensorView &x, std::string_view fmt,
                      int64_t num_per_tokens, const rt::TensorView &out,
                      const rt::TensorView &out_sf, bool round_sf = false,
                      CUstream stream = nullptr);

/// TileKernels 2.1's form (tk21 §3.5), K % 128 == 0: x may be e4m3 with
/// x_sf, its scales of 1 x `num_per_channels` (32 or 128; f32 or e4m3 of
/// any strides, or packed UE8M0 int32), dequantized as x * x_sf in f32 first
/// (ops::absent() and 0 for a plain x); with `use_packed_ue8m0` (requires
/// round_sf) out_sf is the column-pack int32 (ceil(M / bm / 4), K): byte j
/// of word (q, c) the UE8M0 exponent of block 4q + j, column c. As
/// TileKernels, the bytes past the last block are left unwritten.
void per_channel_cast(const rt::TensorView &x, const rt::TensorView &x_sf,
                      int64_t num_per_channels, std::string_view fmt,
                      int64_t num_per_tokens, const rt::TensorView &out,
                      const rt::TensorView &out_sf, bool round_sf = false,
                      bool use_packed_ue8m0 = false, CUstream stream = nullptr);

/// The same for a bf16 x with `num_per_tokens` 32 or 128, written
/// transposed: out e4m3 (K, M), out[c, r] = e4m3(x[r, c] * sf_inv[r / bm,
/// c]); out_sf f32 (M / bm, K) row-major (not transposed).
void per_channel_cast_and_transpose(
    const rt::TensorView &x, std::string_view fmt, int64_t num_per_tokens,
    const rt::TensorView &out, const rt::TensorView &out_sf,
    bool round_sf = false, CUstream stream = nullptr);

/// per_channel_cast_fused (§10.2): out[r] is the (128, 1) e4m3
/// quantization of row pos_to_token[r] of x (zeros where it is negative;
/// without pos_to_token, row r, R = N), x a bf16/f32 (N, K) or, with x_sf
/// (f32 (N, K / 128), num_per_channels 128), e4m3 dequantized as x * x_sf
/// first. out: e4m3 (R, K); out_sf: f32 (ceil(R / 128), K). Absent
/// tensors are ops::absent(). Exact against per_channel_cast_fused_ref.
void per_channel_cast_fused(const rt::TensorView &x, const rt::TensorView &x_sf,
                            const rt::TensorView &pos_to_token,
                            std::string_view fmt, int64_t num_per_tokens,
                            const rt::TensorView &out,
                            const rt::TensorView &out_sf, bool round_sf = false,
                            int64_t num_per_channels = 0,
                            CUstream stream = nullptr);

const ops::OpDef &per_channel_cast_op();
const ops::OpDef &per_channel_cast_fused_op();
const ops::OpDef &per_channel_cast_and_transpose_op();

/// Static parameters of a per_channel_cast kernel.
struct PerChannelCastSpec {
  DType in_dtype = DType::bf16;
  int32_t bm = 128;      ///< rows a scale covers (num_per_tokens)
  int32_t block_m = 128; ///< rows of a tile
  int32_t block_k = 128; ///< columns of a tile
  int32_t threads = 256;
  int32_t round_sf = 0;
  /// 1: out is (K, M): the bf16 tile is transposed first, each channel's
  /// absmax taken along its row, and out_sf is bound as its transposed
  /// view (K, M / bm) (bind_transposed_sf)
  int32_t transpose = 0;
  int32_t vector_bytes = 0; ///< 16: x's rows 16-byte aligned
  int32_t x_sf = 0;         ///< 1: x is e4m3 with f32 scales per 1 x 128
  int32_t gather = 0;       ///< 1: out's rows are x's rows pos_to_token
  int32_t swiglu = 0;       ///< 1: x is (gate | up), cast is bf16(SwiGLU)
  int32_t clamp = 0;        ///< with swiglu: swiglu_clamp_value (a scalar)
  /// 2.1's quantized x: e4m3 with scales of 1 x x_group (32 or 128),
  /// of x_sf_dtype (f32 or e4m3; u8: packed UE8M0), dequantized by
  /// dequant_dsl.h
  int32_t x_group = 0;
  DType x_sf_dtype = DType::f32;
  int32_t col_pack = 0; ///< out_sf: 2.1's column-pack UE8M0 (tk21 §0.4(e))
  /// 1: x's tile is also stored to a shared tile and read back after the
  /// columns' absmax, instead of staying in registers across it (fewer
  /// registers, more blocks an SM; TileKernels' way)
  int32_t stage = 0;
  /// With swiglu: > 0 computes the activation this many rows at a time
  /// into a shared bf16 tile (fewer registers), 0 the whole tile at once
  int32_t swiglu_chunk = 0;
  int32_t min_blocks = 0; ///< > 0: blocks an SM to fit in registers
  /// 1: every tile is whole (M % block_m == 0, K % block_k == 0, x not
  /// gathered nor 2.1-quantized): x's, x_sf's and out's accesses are not
  /// checked
  int32_t inside = 0;
};
TILEJIT_SPEC_FIELDS(PerChannelCastSpec, in_dtype, bm, block_m, block_k, threads,
                    round_sf, transpose, vector_bytes, x_sf, gather, swiglu,
                    clamp, x_group, x_sf_dtype, col_pack, stage, swiglu_chunk,
                    min_blocks, inside)

/// Binds the call's out_sf (M / bm, K) as its transposed view (K, M / bm),
/// as a transposed kernel stores it.
void bind_transposed_sf(const ops::Call &c, ops::KernelArgs &args);

/// The kernel in the DSL (per_channel_cast.dsl.cpp).
Kernel per_channel_cast_kernel(const PerChannelCastSpec &spec);

} // namespace tilejit::quant
