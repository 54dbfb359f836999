// mask_indices_by_tp.h - expert indices masked and renumbered for one
// tensor-parallel rank on the GPU (shared/specs/moe_engram_mhc.md §1.12);
// declared in mask_indices_by_tp.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::moe {

/// masked[i] for each index v of indices (i32 or i64 (T, K), contiguous):
/// with per_gpu = n / num_ep_ranks and per_dp = num_tp_ranks * per_gpu, -1
/// when v < 0 or (v / per_gpu) % num_tp_ranks != tp_rank; else v' = v -
/// tp_rank * per_gpu, d = v' / per_dp, v' - d * (per_dp - per_gpu) (-1 if
/// negative). masked: indices' dtype and shape. Bit-exact. Throws UserError
/// naming the argument, its value and the requirement; nothing is written
/// then.
void mask_indices_by_tp(const rt::TensorView &indices, int64_t n,
                        int64_t num_ep_ranks, int64_t tp_rank,
                        int64_t num_tp_ranks, const rt::TensorView &masked,
                        CUstream stream = nullptr);

const ops::OpDef &mask_indices_by_tp_op();

/// Static parameters of a mask_indices_by_tp kernel (the ranks are
/// compiled in, as TileKernels does).
struct MaskIndicesByTpSpec {
  DType dtype = DType::i64;
  int32_t per_gpu = 32;
  int32_t tp_rank = 0;
  int32_t num_tp_ranks = 2;
  int32_t block = 1024; ///< indices a block
  int32_t threads = 256;
};
TILEJIT_SPEC_FIELDS(MaskIndicesByTpSpec, dtype, per_gpu, tp_rank, num_tp_ranks,
                    block, threads)

/// The kernel in the DSL (mask_indices_by_tp.dsl.cpp).
Kernel mask_indices_by_tp_kernel(const MaskIndicesByTpSpec &spec);

} // namespace tilejit::moe
