// gemm.h - C = A * B^T on the GPU: bf16 inputs, f32 accumulation, TMA +
// WGMMA on sm_90a. The CPU reference is gemm_ref in reference.h.
#pragma once

#include "tilejit/compiler/kernel.h"
#include "tilejit/runtime/spec_key.h"
#include "tilejit/runtime/tensor.h"

#include <cuda.h>

namespace tilejit::gemm {

/// Static parameters of a gemm kernel; also the bytewise key of the op's
/// kernel table (all 32-bit fields).
struct GemmSpec {
  DType in_dtype = DType::bf16;
  DType out_dtype = DType::bf16;
  int32_t block_n = 256;  ///< columns of C a block computes (128 rows)
  int32_t stages = 4;     ///< shared-memory buffers of the TMA pipeline
  int32_t group_m = 8;    ///< row tiles a band of the grid walks (L2 reuse)
  int32_t full_tiles = 0; ///< 1: M % 128 == 0, N % block_n == 0 (no masks)
};

/// The specialisation for (M, N) with these dtypes.
GemmSpec gemm_spec(DType in_dtype, DType out_dtype, int64_t m, int64_t n);

/// c = a * b^T: a (M, K) and b (N, K) of one dtype, bf16, f16, f32 (WGMMA
/// multiplies it as tf32: the low 13 mantissa bits are ignored), e4m3 or
/// e5m2 (fp8 without scales), row-major with rows
/// 16-byte aligned and a 16-byte-aligned base; c
/// (M, N) of bf16, f16 or f32, unit inner stride, N even. f32 accumulation.
/// Throws UserError naming the argument, its value and the requirement;
/// nothing is written then.
void gemm(const rt::TensorView &a, const rt::TensorView &b,
          const rt::TensorView &c, CUstream stream = nullptr);

rt::SpecKey gemm_key(const GemmSpec &spec);

/// The kernel in the DSL (gemm.dsl.cpp).
Kernel gemm_kernel(const GemmSpec &spec);

/// Dynamic shared memory of a specialisation: one 128 x 64 A tile and one
/// block_n x 64 B tile per stage, plus 1 KiB to align them to 1024 bytes.
int64_t gemm_shared_bytes(const GemmSpec &spec);
/// K of a shared tile: 128 bytes of the input dtype.
int64_t gemm_block_k(const GemmSpec &spec);

} // namespace tilejit::gemm
