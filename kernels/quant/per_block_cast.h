// per_block_cast.h - bm x bk block quantization to fp8 e4m3 or packed fp4
// e2m1 (shared/specs/quant_transpose.md §8); declared in per_block_cast.cpp,
// the CPU reference is per_block_cast_ref in reference.h.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"
#include "quant/reference.h"
#include "quant/scale_layout.h"

#include <string_view>

namespace tilejit::quant {

/// Quantizes a contiguous bf16 or f32 x (M, K), K % 64 == 0, in blocks of
/// bm x bk (each 32 or 128): per block, amax = max |x|, sf = max(amax,
/// clamp) / fmt_max (rounded up to a power of two with `round_sf`), out =
/// fmt(x * sf_inv) saturating. fmt "e4m3": out e4m3 (M, K); "e2m1": out int8
/// (M, K / 2), two codes a byte, the even element in the low nibble. out_sf
/// holds the (ceil(M / bm), ceil(K / bk)) scales as per_token_cast's do:
/// f32 row-major, f32 with strides (1, align(M', 4)) with
/// `use_tma_aligned_col_major_sf`, or packed UE8M0 int32 with
/// `use_packed_ue8m0` (requires both other flags). Exact against the
/// reference. Throws UserError naming the argument, its value and the
/// requirement; nothing is written then.
void per_block_cast(const rt::TensorView &x, std::string_view fmt, int64_t bm,
                    int64_t bk, const rt::TensorView &out,
                    const rt::TensorView &out_sf,
                    bool use_tma_aligned_col_major_sf = false,
                    bool round_sf = false, bool use_packed_ue8m0 = false,
                    CUstream stream = nullptr);

/// per_block_cast's scales only (out_sf as per_block_cast's; x is read,
/// nothing else written).
void per_block_cast_with_sf_only(const rt::TensorView &x, std::string_view fmt,
                                 int64_t bm, int64_t bk,
                                 const rt::TensorView &out_sf,
                                 bool use_tma_aligned_col_major_sf = false,
                                 bool round_sf = false,
                                 bool use_packed_ue8m0 = false,
                                 CUstream stream = nullptr);

/// per_block_cast's data with given scales: `sf` a row-major f32
/// (ceil(M / bm), ceil(K / bk)), sf_inv = 1 / sf (IEEE). The layout flags
/// must be false (as the original requires).
void per_block_cast_with_precomputed_sf(
    const rt::TensorView &x, std::string_view fmt, int64_t bm, int64_t bk,
    const rt::TensorView &sf, const rt::TensorView &out,
    bool use_tma_aligned_col_major_sf = false, bool round_sf = false,
    bool use_packed_ue8m0 = false, CUstream stream = nullptr);

const ops::OpDef &per_block_cast_op();
const ops::OpDef &per_block_cast_with_sf_only_op();
const ops::OpDef &per_block_cast_with_precomputed_sf_op();

/// Static parameters of a per_block_cast kernel.
struct PerBlockCastSpec {
  DType in_dtype = DType::bf16;
  int32_t e2m1 = 0;           ///< 1: fp4 e2m1 codes, two a byte; 0: fp8 e4m3
  int32_t bm = 128, bk = 128; ///< the scaling block
  /// Columns of a tile: max(bk, 8192 / bm), a tile of bm rows (8192
  /// elements over 256 threads, as the original)
  int32_t block_k = 128;
  int32_t threads = 256;
  int32_t round_sf = 0;
  SfLayout sf_layout = SfLayout::row_major;
  int32_t vector_bytes = 0; ///< 16: x's and out's rows 16-byte aligned
  /// What a call computes: data and scales, scales only, or data from
  /// given scales (the three ops of per_block_cast.cpp)
  using Mode = CastMode;
  Mode mode = Mode::both;
  int32_t e2m1_least = 0; ///< 1: to_e2m1's E2m1Encode::least form
};
TILEJIT_SPEC_FIELDS(PerBlockCastSpec, in_dtype, e2m1, bm, bk, block_k, threads,
                    round_sf, sf_layout, vector_bytes, mode, e2m1_least)

/// The kernel in the DSL (per_block_cast.dsl.cpp).
Kernel per_block_cast_kernel(const PerBlockCastSpec &spec);

} // namespace tilejit::quant
