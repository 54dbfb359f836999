// normalize_weight.h - MoE top-k weights normalised per row on the GPU
// (shared/specs/moe_engram_mhc.md §1.9); declared in normalize_weight.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::moe {

/// denominator[t] = 1e-20f + w[t, 0] + ... + w[t, K-1] (sequential f32
/// additions), normalized[t, k] = w[t, k] / denominator[t] (IEEE). w:
/// contiguous f32 (T, K), 1 <= K <= 32; denominator f32 (T,); normalized
/// f32 (T, K). Bit-exact. Throws UserError naming the argument, its value
/// and the requirement; nothing is written then.
void normalize_weight(const rt::TensorView &topk_weights,
                      const rt::TensorView &denominator,
                      const rt::TensorView &normalized,
                      CUstream stream = nullptr);

const ops::OpDef &normalize_weight_op();

/// Static parameters of a normalize_weight kernel.
struct NormalizeWeightSpec {
  int32_t topk = 8;      ///< K
  int32_t block_t = 128; ///< rows a block: one a thread
  int32_t threads = 128;
  /// 16: the rows are 16-byte aligned and hold whole 16-byte vectors, so a
  /// thread reads and writes its row straight from global memory (else
  /// through shared memory).
  int32_t vector_bytes = 0;
};
TILEJIT_SPEC_FIELDS(NormalizeWeightSpec, topk, block_t, threads, vector_bytes)

/// The kernel in the DSL (normalize_weight.dsl.cpp).
Kernel normalize_weight_kernel(const NormalizeWeightSpec &spec);

} // namespace tilejit::moe
