// sinkhorn_normalize.h - Sinkhorn normalisation of small square matrices on
// the GPU, forward (shared/specs/moe_engram_mhc.md §3.2); the CPU reference
// is sinkhorn_normalize_ref in reference.h.
#pragma once

#include "tilejit/compiler/kernel.h"
#include "tilejit/runtime/spec_key.h"
#include "tilejit/runtime/tensor.h"

#include <cuda.h>

namespace tilejit::mhc {

/// Static parameters of a sinkhorn_normalize kernel; also the bytewise key
/// of the op's kernel table (all 32-bit fields).
struct SinkhornSpec {
  int32_t n = 4; ///< matrices are n x n
  int32_t repeat = 10;
  uint32_t eps_bits = 0x358637bd; ///< eps as float bits (1e-6f)
  int32_t block_b = 64;           ///< matrices a block
  int32_t threads = 128;
  int32_t vector_bytes = 0; ///< 16: rows are 16-byte aligned
};

/// out = Sinkhorn(x) for fp32 x (..., n, n), viewed as (B, n, n):
/// Y = softmax_rows(x) + eps, Y /= colsum(Y) + eps, then (repeat - 1) times
/// Y /= rowsum(Y) + eps and Y /= colsum(Y) + eps. x and out are contiguous
/// f32 of one shape, n a power of two up to 32, repeat >= 1, eps >= 0.
/// Throws UserError naming the argument, its value and the requirement;
/// nothing is written then.
void sinkhorn_normalize(const rt::TensorView &x, const rt::TensorView &out,
                        int repeat = 10, float eps = 1e-6f,
                        CUstream stream = nullptr);

rt::SpecKey sinkhorn_normalize_key(const SinkhornSpec &spec);

/// The kernel in the DSL (sinkhorn_normalize.dsl.cpp).
Kernel sinkhorn_normalize_kernel(const SinkhornSpec &spec);

/// The specialisation for n x n matrices (validates n, repeat and eps).
SinkhornSpec sinkhorn_normalize_spec(int64_t n, int repeat, float eps);

} // namespace tilejit::mhc
