// per_block_cast_lossless.h - Re-blocking power-of-two-scaled packed fp4
// into e4m3 without loss (shared/specs/quant_transpose.md §9); declared in
// per_block_cast_lossless.cpp, the CPU reference is
// per_block_cast_lossless_ref in reference.h.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"
#include "quant/reference.h"

namespace tilejit::quant {

/// out = e4m3(fp4 x 2^(e_in - e_out)) per output block of out_bm x out_bk,
/// e_out = max(e_max - 6, 0) over the block's input scale exponents, and
/// out_sf = 2^(e_out - 127) (f32, or the UE8M0 byte with
/// use_packed_ue8m0). x_data: int8 (M, K / 2) of e2m1 codes (the even
/// element in the low nibble), K % 32 == 0; x_sf: the (1, x_bk) scales, f32
/// of any strides or packed int32, each a power of two; out: e4m3 (M, K);
/// out_sf by the flags (round_sf is ignored: the scales are powers of two).
/// Exact against the reference where every output block's input scales lie
/// within 2^11 of each other; TileKernels traps otherwise, this kernel does
/// not check (it would read x_sf on the host): such blocks lose the
/// smallest values. Throws UserError naming the argument, its value and the
/// requirement; nothing is written then.
void per_block_cast_lossless(
    const rt::TensorView &x_data, const rt::TensorView &x_sf, int64_t x_bk,
    int64_t out_bm, int64_t out_bk, const rt::TensorView &out,
    const rt::TensorView &out_sf, bool use_tma_aligned_col_major_sf = false,
    bool use_packed_ue8m0 = false, CUstream stream = nullptr);

const ops::OpDef &per_block_cast_lossless_op();

/// Static parameters of a per_block_cast_lossless kernel.
struct PerBlockCastLosslessSpec {
  int32_t x_bk = 32;                  ///< channels an input scale covers
  int32_t x_packed = 0;               ///< 1: input scales are UE8M0 bytes
  int32_t out_bm = 128, out_bk = 128; ///< the output block
  /// A tile of block_m = max(out_bm, 32) rows and block_k = max(out_bk,
  /// 8192 / block_m) columns, as the original
  int32_t block_m = 128, block_k = 128;
  int32_t threads = 256;
  int32_t min_blocks = 0; ///< > 0: blocks an SM to fit in registers
  SfLayout sf_layout = SfLayout::row_major; ///< of out_sf
  int32_t vector_bytes = 0; ///< 16: rows of x_data and out 16-byte aligned
};
TILEJIT_SPEC_FIELDS(PerBlockCastLosslessSpec, x_bk, x_packed, out_bm, out_bk,
                    block_m, block_k, threads, min_blocks, sf_layout,
                    vector_bytes)

/// The kernel in the DSL (per_block_cast_lossless.dsl.cpp).
Kernel per_block_cast_lossless_kernel(const PerBlockCastLosslessSpec &spec);

} // namespace tilejit::quant
