// norm_forward.h - TileKernels 2.1's RMSNorm forward on the GPU
// (shared/specs/tk21_ops.md §3.10, without the quantised variant);
// declared in norm_forward.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::quant {

const ops::OpDef &norm_forward_op();

/// Static parameters: a block a row of H, in chunks of `chunk` columns
/// (8 a thread; the last one partial where chunk does not divide H).
struct NormForwardSpec {
  DType dtype = DType::bf16; ///< x's (and out's)
  int32_t hidden = 7168;     ///< H
  int32_t chunk = 1024;
  int32_t weight = 1, residual = 0, rstd = 0;
  int32_t threads = 128;
  int32_t vector_bytes = 0; ///< 16: every row 16-byte aligned
};
TILEJIT_SPEC_FIELDS(NormForwardSpec, dtype, hidden, chunk, weight, residual,
                    rstd, threads, vector_bytes)

/// The kernel in the DSL (norm_forward.dsl.cpp).
Kernel norm_forward_kernel(const NormForwardSpec &spec);

} // namespace tilejit::quant
