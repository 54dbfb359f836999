// sinkhorn_normalize.h - Sinkhorn normalisation of small square matrices on
// the GPU, forward and backward (TileKernels 2.1's mhc_sinkhorn_bwd;
// shared/specs/moe_engram_mhc.md §3.2); declared in sinkhorn_normalize.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::mhc {

/// out = Sinkhorn(x) for fp32 x (..., n, n), viewed as (B, n, n):
/// Y = softmax_rows(x) + eps, Y /= colsum(Y) + eps, then (repeat - 1) times
/// Y /= rowsum(Y) + eps and Y /= colsum(Y) + eps. x and out are contiguous
/// f32 of one shape, n a power of two up to 32, 1 <= repeat <= 100,
/// eps >= 0. Throws UserError naming the argument, its value and the
/// requirement; nothing is written then.
void sinkhorn_normalize(const rt::TensorView &x, const rt::TensorView &out,
                        int repeat = 10, float eps = 1e-6f,
                        CUstream stream = nullptr);

const ops::OpDef &sinkhorn_normalize_op();
const ops::OpDef &mhc_sinkhorn_bwd_op();

/// Static parameters of a sinkhorn_normalize kernel (32-bit fields: the
/// bytewise key of the op's kernel table).
struct SinkhornSpec {
  int32_t n = 4; ///< matrices are n x n
  int32_t repeat = 10;
  uint32_t eps_bits = 0x358637bd; ///< eps as float bits (1e-6f)
  int32_t block_b = 64;           ///< matrices a block
  int32_t threads = 128;
  int32_t vector_bytes = 0; ///< 16: rows are 16-byte aligned
};
TILEJIT_SPEC_FIELDS(SinkhornSpec, n, repeat, eps_bits, block_b, threads,
                    vector_bytes)

/// The kernels in the DSL (sinkhorn_normalize.dsl.cpp).
Kernel sinkhorn_normalize_kernel(const SinkhornSpec &spec);
/// The backward recomputes each step's input from the softmax (no
/// intermediates kept): O(repeat^2) steps of n x n work a matrix.
Kernel mhc_sinkhorn_bwd_kernel(const SinkhornSpec &spec);

} // namespace tilejit::mhc
