// gemm.h - C = A * B^T on the GPU: f32 accumulation, TMA + WGMMA on sm_90a;
// declared in gemm.cpp. The CPU reference is gemm_ref in reference.h.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

#include "tilejit/compiler/dsl.h"

#include <functional>

namespace tilejit::gemm {

/// c = a * b^T: a (M, K) and b (N, K) of one dtype, bf16, f16, f32 (WGMMA
/// multiplies it as tf32: the low 13 mantissa bits are ignored), e4m3 or
/// e5m2 (fp8 without scales), row-major with rows 16-byte aligned and a
/// 16-byte-aligned base; c (M, N) of bf16, f16 or f32, unit inner stride, N
/// even. f32 accumulation. Throws UserError naming the argument, its value
/// and the requirement; nothing is written then.
void gemm(const rt::TensorView &a, const rt::TensorView &b,
          const rt::TensorView &c, CUstream stream = nullptr);

const ops::OpDef &gemm_op();

/// Static parameters of a gemm kernel (32-bit fields: the bytewise key of
/// the op's kernel table).
struct GemmSpec {
  DType in_dtype = DType::bf16;
  DType out_dtype = DType::bf16;
  int32_t block_n = 256;  ///< columns of C a block computes (128 rows)
  int32_t stages = 4;     ///< shared-memory buffers of the TMA pipeline
  int32_t group_m = 8;    ///< row tiles a band of the grid walks (L2 reuse)
  int32_t full_tiles = 0; ///< 1: M % 128 == 0, N % block_n == 0 (no masks)
  /// 1: c's rows are 16-byte aligned (base and row stride): a bf16 or f16
  /// c is stored through TMA, overlapping the next tile's products.
  int32_t aligned_c = 0;
};
TILEJIT_SPEC_FIELDS(GemmSpec, in_dtype, out_dtype, block_n, stages, group_m,
                    full_tiles, aligned_c)

/// The kernel in the DSL (gemm.dsl.cpp).
Kernel gemm_kernel(const GemmSpec &spec);

/// A gemm kernel's epilogue: from the f32 accumulator of a block's tile of
/// C (128 x block_n, from row m0 and column n0), the tile stored to c (of
/// c's dtype). It may declare parameters of its own (they follow a, b and
/// c) and load from them: element-wise math, casts, per-row and per-column
/// vectors and scalars run in the WGMMA kernel (docs/tile-dialect.md).
using GemmEpilogue = std::function<dsl::Value(
    dsl::KernelBuilder &k, dsl::Value acc, dsl::Value m0, dsl::Value n0)>;

/// The kernel with `epilogue` in place of the cast to c's dtype.
Kernel gemm_kernel(const GemmSpec &spec, const GemmEpilogue &epilogue);

/// K of a shared tile: 128 bytes of the input dtype.
int64_t gemm_block_k(const GemmSpec &spec);

} // namespace tilejit::gemm
