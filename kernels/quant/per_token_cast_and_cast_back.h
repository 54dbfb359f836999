// per_token_cast_and_cast_back.h - TileKernels 2.1's "fake quantization":
// a per-token cast to e4m3 or e2m1 and straight back to x's dtype
// (shared/specs/tk21_ops.md §3.3); declared in
// per_token_cast_and_cast_back.cpp, the CPU reference is
// per_token_cast_and_cast_back_ref in reference.h.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::quant {

/// Static parameters of a per_token_cast_and_cast_back kernel (also the
/// bytewise key: 32-bit fields). A block takes block_m x block_k of x, 2048
/// elements over 64 threads.
struct CastAndCastBackSpec {
  DType dtype = DType::bf16; ///< x's and out's
  int32_t e2m1 = 0;          ///< 1: fmt e2m1, else e4m3
  int32_t group = 128;       ///< num_per_channels
  int32_t block_m = 1;
  int32_t block_k = 2048;
  int32_t threads = 64;
  int32_t round_sf = 0;
  int32_t e4m3_sf = 0;      ///< use_e4m3_sf
  int32_t vector_bytes = 0; ///< 16 where x's and out's rows are aligned
};
TILEJIT_SPEC_FIELDS(CastAndCastBackSpec, dtype, e2m1, group, block_m, block_k,
                    threads, round_sf, e4m3_sf, vector_bytes)

/// per_token_cast_and_cast_back: x (M, K) bf16 or f32 with unit inner
/// stride, K % 64 == 0, per row and group of num_per_channels (16, 32, 64
/// or 128) channels: the scale of the group's absmax (§3.2: round_sf
/// rounds it up to a power of two; use_e4m3_sf takes e4m3(amax / max) with
/// the absmax clamped at max / 2^9, and 1 / it), q = fmt(x / sf) (e4m3 or
/// e2m1, saturating), out = x's dtype(float(q) * sf) (round to nearest
/// even). `out` may be `x` itself (TileKernels writes over x): every block
/// reads its tile before it writes it. Exact against the reference. Throws
/// UserError naming the argument, its value and the requirement; nothing is
/// written then.
void per_token_cast_and_cast_back(
    const rt::TensorView &x, const rt::TensorView &out, std::string_view fmt,
    int64_t num_per_channels, bool round_sf = false, bool use_e4m3_sf = false,
    CUstream stream = nullptr);

const ops::OpDef &per_token_cast_and_cast_back_op();

/// The kernel in the DSL (per_token_cast_and_cast_back.dsl.cpp).
Kernel per_token_cast_and_cast_back_kernel(const CastAndCastBackSpec &spec);

} // namespace tilejit::quant
