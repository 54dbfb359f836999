// norm_backward.h - TileKernels 2.1's RMSNorm backward on the GPU
// (shared/specs/tk21_ops.md §3.11); declared in norm_backward.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::quant {

const ops::OpDef &norm_backward_op();

/// Static parameters. Kernel 1: `blocks` blocks, each a contiguous range of
/// rows, a row in `chunks` chunks of `chunk` columns (4 a thread; the last
/// partial where chunk does not divide H), the weight's gradient of its
/// rows summed in registers and written as row b of the scratch partials
/// (blocks, H). Kernel 2: the partials' columns summed (+ the given
/// weight_grad) into weight_grad_out.
struct NormBackwardSpec {
  DType dtype = DType::bf16; ///< x's (and x_grad's)
  int32_t hidden = 7168;     ///< H
  int32_t chunk = 1024;
  int32_t blocks = 256; ///< a power of two: min(256, T rounded up)
  int32_t weight = 1, residual = 0;
  int32_t weight_grad = 0;      ///< 1: a weight gradient to add to
  int32_t weight_out = 0;       ///< 1: weight_grad_out written
  DType out_dtype = DType::f32; ///< weight_grad_out's
  int32_t threads = 128;
  int32_t vector_bytes = 0; ///< 16: every row 16-byte aligned
  /// 1: each row's x and out_grad loaded by the step before (carried in
  /// registers, and not loaded again for pass 2), so that the next row's
  /// loads are in flight while a row is reduced and written: 159.2 us
  /// against 203.9 at 8192 x 7168 bf16 on an H100 (session 67, 75 % and
  /// 59 % of a copy's bandwidth). 0 (TILEJIT_TUNE) loads each row in its
  /// own step.
  int32_t prefetch = 1;
};
TILEJIT_SPEC_FIELDS(NormBackwardSpec, dtype, hidden, chunk, blocks, weight,
                    residual, weight_grad, weight_out, out_dtype, threads,
                    vector_bytes, prefetch)

/// The kernels in the DSL (norm_backward.dsl.cpp): the rows, then the
/// weight gradient's sum of the partials.
Kernel norm_backward_kernel(const NormBackwardSpec &spec);
Kernel norm_backward_weight_kernel(const NormBackwardSpec &spec);

} // namespace tilejit::quant
