// norm_forward.h - TileKernels 2.1's RMSNorm forward on the GPU
// (shared/specs/tk21_ops.md §3.10): norm_forward (norm_forward.cpp) and
// norm_forward_and_per_token_cast (norm_forward_and_per_token_cast.cpp),
// one kernel (norm_forward.dsl.cpp).
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"
#include "quant/reference.h"

namespace tilejit::quant {

const ops::OpDef &norm_forward_op();
const ops::OpDef &norm_forward_and_per_token_cast_op();

/// Static parameters: a block a row of H, in chunks of `chunk` columns
/// (8 a thread; the last one partial where chunk does not divide H).
struct NormForwardSpec {
  DType dtype = DType::bf16; ///< x's (and out's unless cast)
  int32_t hidden = 7168;     ///< H
  int32_t chunk = 1024;
  int32_t weight = 1, residual = 0, rstd = 0;
  int32_t threads = 128;
  int32_t vector_bytes = 0; ///< 16: every row 16-byte aligned
  /// norm_forward_and_per_token_cast: out e4m3 with a scale a 32 columns
  /// (§3.2, in sf_layout), and with out_bf16 the output rounded to bf16.
  int32_t cast = 0, round_sf = 0, out_bf16 = 0;
  SfLayout sf_layout = SfLayout::row_major;
  /// mega_moe_sf: the UE8M0 bytes also in a MoE kernel's activation-SF
  /// rows (its block of rows a run-time scalar).
  int32_t mega = 0;
};
TILEJIT_SPEC_FIELDS(NormForwardSpec, dtype, hidden, chunk, weight, residual,
                    rstd, threads, vector_bytes, cast, round_sf, out_bf16,
                    sf_layout, mega)

/// The row of a MoE kernel's activation-SF buffer that token t's scales go
/// to, for blocks of bm tokens (tk21_ops.md §3.10): i = t % bm, (t / bm)
/// align(bm, 128) + (i / 128) 128 + (i % 32) 4 + (i % 128) / 32 (a 4 x 32
/// transpose inside each 128-row tile).
inline int64_t mega_moe_row(int64_t t, int64_t bm) {
  const int64_t i = t % bm;
  return t / bm * ((bm + 127) / 128 * 128) + i / 128 * 128 + i % 32 * 4 +
         i % 128 / 32;
}
/// The rows that T tokens' blocks of bm take: ceil(T / bm) align(bm, 128).
inline int64_t mega_moe_rows(int64_t t, int64_t bm) {
  return (t + bm - 1) / bm * ((bm + 127) / 128 * 128);
}

/// UserError unless residual and residual_out come together.
void check_norm_residual(const ops::Call &c);
/// The spec fields both ops share, from a call (x, weight, residual, rstd;
/// the chunk and threads from H), and their kernel tensors: x, weight,
/// residual, residual_out and rstd as the kernel's rows.
NormForwardSpec norm_forward_spec(const ops::Call &c);
void bind_norm_rows(const ops::Call &c, ops::KernelArgs &args);
/// Tensor `name` of the call as (numel / cols, cols) rows.
rt::TensorView norm_rows(const ops::Call &c, const char *name, int64_t cols);

/// The kernel in the DSL (norm_forward.dsl.cpp).
Kernel norm_forward_kernel(const NormForwardSpec &spec);

} // namespace tilejit::quant
