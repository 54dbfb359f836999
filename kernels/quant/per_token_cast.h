// per_token_cast.h - Row-wise (1 x num_per_channels) fp8 e4m3 quantization
// on the GPU (shared/specs/quant_transpose.md §3, §4); declared in
// per_token_cast.cpp, the CPU reference is per_token_cast_ref in reference.h.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"
#include "quant/reference.h"
#include "quant/scale_layout.h"

#include <string_view>

namespace tilejit::quant {

/// Static parameters of a per_token_cast kernel; also the bytewise key of
/// the op's kernel table (all 32-bit fields).
struct PerTokenCastSpec {
  DType in_dtype = DType::bf16;
  int32_t e2m1 = 0; ///< 1: fp4 e2m1 codes, two a byte; 0: fp8 e4m3
  /// 1: E5M6 codes, 8 in 3 words, one scale a row (group = K; §5): a tile
  /// of block_m whole rows, block_k = K rounded up to 1024
  int32_t e5m6 = 0;
  /// num_per_channels, padded to a power of two; or K itself when K is an
  /// odd multiple of a power of two (see per_token_cast_tiling)
  int32_t group = 128;
  int32_t block_m = 8;   ///< rows of a tile
  int32_t block_k = 512; ///< columns of a tile (a multiple of group)
  int32_t threads = 128;
  int32_t round_sf = 0;
  SfLayout sf_layout = SfLayout::row_major; ///< §3.3
  /// Bytes of a vector access: the tiling's choice (0: 16), which the host
  /// keeps where x's and out's rows are aligned to it and sets to 0 (no
  /// vectors) otherwise
  int32_t vector_bytes = 0;
  /// 1: a tile is exactly one whole row of x (block_m 1, block_k = K), so
  /// its loads and stores need no bounds checks
  int32_t inside = 0;
  /// > 0 (one group a row, K = parts x p with p a power of two): x and
  /// out are passed as (parts, M, p) views, a tile is (parts, block_m, p),
  /// and each thread holds the same vector of every part of its row
  int32_t parts = 0;
  /// > 0: K = whole column blocks + `tail` columns (a shorter last group,
  /// dividing block_k); the last column of blocks takes only the tail,
  /// block_m x tail boxes
  int32_t tail = 0;
  /// Data and scales, scales only, or data from given row-major scales
  /// (the three ops of per_token_cast.cpp; given scales only with groups
  /// of 16 to 128, the box tiling)
  CastMode mode = CastMode::both;
  /// 1: TileKernels 2.1's E4M3 scales (use_e4m3_sf): stored, or given, as
  /// e4m3 bytes
  int32_t e4m3_sf = 0;
  /// A quantized x (in_dtype e4m3, or i8 of packed e2m1) is re-quantized
  /// (§4.3): its scales cover x_bm rows (1, 32 or 128) x x_group channels
  /// (16 to 128); packed UE8M0 with x_packed
  int32_t x_bm = 0;
  int32_t x_group = 0;
  int32_t x_packed = 0;
  /// 1: 2.1's stochastic_cast: the codes of each quad of columns 4q .. 4q +
  /// 3 round with the random bits of their scaled values and index q
  int32_t stochastic = 0;
  /// 1: those codes below the normals from a float multiply and conversion
  /// (stochastic_dsl.h's step, `convert`)
  int32_t stochastic_convert = 0;
  int32_t e2m1_least = 0; ///< 1: to_e2m1's E2m1Encode::least form
};
TILEJIT_SPEC_FIELDS(PerTokenCastSpec, in_dtype, e2m1, e5m6, group, block_m,
                    block_k, threads, round_sf, sf_layout, vector_bytes, inside,
                    parts, tail, mode, e4m3_sf, x_bm, x_group, x_packed,
                    stochastic, stochastic_convert, e2m1_least)

/// Quantizes x (M, K) of bf16 or f32 (unit inner stride, any row stride) to
/// fp8 e4m3 or fp4 e2m1 in groups of `num_per_channels` channels of a row:
/// per group, amax = max |x|, sf = max(amax, clamp) / fmt_max (e4m3: 1e-4 and
/// 448, e2m1: 6 x 2^-126 and 6; rounded up to a power of two with
/// `round_sf`), out = fmt(x * sf_inv) saturating. `fmt` is "e4m3" or "e2m1";
/// `num_per_channels` one of 16, 32, 64, 128 or K. `out` is a contiguous
/// e4m3 (M, K), or for e2m1 an int8 (M, K / 2) of two codes a byte (the even
/// element in the low nibble; K even); `out_sf` is float32 (M, nK)
/// row-major, or with
/// `use_tma_aligned_col_major_sf` strided (1, align(M, 4)), or with
/// `use_packed_ue8m0` (requires both other flags) int32 (M, ceil(nK/4))
/// strided (1, align(M, 4)) holding four UE8M0 bytes; with `use_e4m3_sf`
/// (TileKernels 2.1; not with round_sf or packed) e4m3 scales
/// e4m3(max(amax, fmt_max / 512) / fmt_max), sf_inv = 1 / that, in an e4m3
/// (M, nK) row-major or strided (1, align(M, 16)); with `stochastic_cast`
/// (2.1; groups of 16 to 128, K % 4 == 0) the codes of columns 4q .. 4q + 3
/// of a row round with the random bits of their scaled values and index q,
/// in software (not bit-identical to Blackwell's cvt.rs). Exact against the
/// reference. Throws UserError naming the argument, its value and the
/// requirement; nothing is written then.
void per_token_cast(const rt::TensorView &x, std::string_view fmt,
                    int64_t num_per_channels, const rt::TensorView &out,
                    const rt::TensorView &out_sf,
                    bool use_tma_aligned_col_major_sf = false,
                    bool round_sf = false, bool use_packed_ue8m0 = false,
                    bool use_e4m3_sf = false, bool stochastic_cast = false,
                    CUstream stream = nullptr);

/// per_token_cast of a quantized x (§4.3, re-quantization): x e4m3 (M, K)
/// or int8 (M, K / 2) of packed e2m1 codes, with its scales `x_sf` of
/// x_block_m x x_block_k (1, 32 or 128 x 16, 32, 64 or 128) blocks, f32
/// (ceil(M / x_block_m), ceil(K / x_block_k)) of any strides or packed
/// UE8M0 int32; its values x_q x sf_in (in f32) quantized as above, in
/// groups of 16 to 128 (not K).
void per_token_cast(const rt::TensorView &x, const rt::TensorView &x_sf,
                    int64_t x_block_m, int64_t x_block_k, std::string_view fmt,
                    int64_t num_per_channels, const rt::TensorView &out,
                    const rt::TensorView &out_sf,
                    bool use_tma_aligned_col_major_sf = false,
                    bool round_sf = false, bool use_packed_ue8m0 = false,
                    bool use_e4m3_sf = false, bool stochastic_cast = false,
                    CUstream stream = nullptr);

/// Only per_token_cast's scales (`out_sf`, as per_token_cast writes them).
void per_token_cast_with_sf_only(
    const rt::TensorView &x, std::string_view fmt, int64_t num_per_channels,
    const rt::TensorView &out_sf, bool use_tma_aligned_col_major_sf = false,
    bool round_sf = false, bool use_packed_ue8m0 = false,
    bool use_e4m3_sf = false, CUstream stream = nullptr);

/// per_token_cast's data with given scales: `sf` a row-major f32 (M, nK)
/// (e4m3 with use_e4m3_sf), out = fmt(x * (1 / sf)) (§4.4); `num_per_channels`
/// 16, 32, 64 or 128, and the two layout flags false (a given sf is row-major).
void per_token_cast_with_precomputed_sf(
    const rt::TensorView &x, std::string_view fmt, int64_t num_per_channels,
    const rt::TensorView &sf, const rt::TensorView &out,
    bool use_tma_aligned_col_major_sf = false, bool round_sf = false,
    bool use_packed_ue8m0 = false, bool use_e4m3_sf = false,
    CUstream stream = nullptr);

const ops::OpDef &per_token_cast_op();
const ops::OpDef &per_token_cast_with_sf_only_op();
const ops::OpDef &per_token_cast_with_precomputed_sf_op();

/// The kernel in the DSL (per_token_cast.dsl.cpp); e5m6's in
/// per_token_cast_e5m6.dsl.cpp.
Kernel per_token_cast_kernel(const PerTokenCastSpec &spec);
Kernel per_token_cast_e5m6_kernel(const PerTokenCastSpec &spec);

/// The tile of a specialisation: group (padded to a power of two, or K
/// unpadded), block_k, block_m and threads for M x K; fewer rows (M) take
/// smaller tiles where the usual ones would give fewer than 1024 blocks.
PerTokenCastSpec per_token_cast_tiling(PerTokenCastSpec spec, int64_t m,
                                       int64_t k, int64_t num_per_channels);

} // namespace tilejit::quant
