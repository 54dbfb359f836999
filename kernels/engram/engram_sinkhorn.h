// engram_sinkhorn.h - TileKernels 2.1's Engram Sinkhorn building blocks on
// the GPU (shared/specs/tk21_ops.md §5.4): the momentum update, a
// row-normalising step with per-block column sums of squares, their
// fixed-order reduction, and the final scaled matrix; declared in
// engram_sinkhorn.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::engram {

const ops::OpDef &engram_sinkhorn_momentum_update_op();
const ops::OpDef &engram_sinkhorn_step_op();
const ops::OpDef &engram_sinkhorn_step_reduce_op();
const ops::OpDef &engram_sinkhorn_finalize_op();

/// The momentum update: the tensors seen flat, 8 elements a thread.
struct SinkhornMomentumSpec {
  DType grad = DType::f32, buffer = DType::f32;
  int32_t nesterov = 1;
  int32_t threads = 256;
  int32_t vector_bytes = 0;
};
TILEJIT_SPEC_FIELDS(SinkhornMomentumSpec, grad, buffer, nesterov, threads,
                    vector_bytes)

/// A row kernel (step, finalize): a row of Dh columns in chunks, the rows
/// of a block in turn; the step's column sums carried in registers.
struct SinkhornRowSpec {
  int32_t cols = 7168;  ///< Dh
  int32_t chunk = 1024; ///< a power of two dividing Dh
  int32_t threads = 128;
  int32_t vector_bytes = 0;
};
TILEJIT_SPEC_FIELDS(SinkhornRowSpec, cols, chunk, threads, vector_bytes)

/// The reduction: the partial rows added in order, `unroll` in flight, a
/// column a thread (`threads` columns a block, one warp so that Dh / 32
/// blocks spread over the SMs).
struct SinkhornReduceSpec {
  int32_t unroll = 64; ///< a power of two
  int32_t threads = 32;
};
TILEJIT_SPEC_FIELDS(SinkhornReduceSpec, unroll, threads)

/// The kernels in the DSL (engram_sinkhorn.dsl.cpp).
Kernel sinkhorn_momentum_kernel(const SinkhornMomentumSpec &spec);
Kernel sinkhorn_step_kernel(const SinkhornRowSpec &spec);
Kernel sinkhorn_step_reduce_kernel(const SinkhornReduceSpec &spec);
Kernel sinkhorn_finalize_kernel(const SinkhornRowSpec &spec);

} // namespace tilejit::engram
