// topk_gate.h - Row-wise top-k expert indices on the GPU
// (shared/specs/moe_engram_mhc.md §1.1); declared in topk_gate.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::moe {

/// topk_idx[t, :] = the indices of the num_topk largest scores of row t, in
/// descending score order, ties to the smaller index (a stable descending
/// sort's first columns). scores: contiguous f32 (T, E) with 1 <= E <= 1024;
/// topk_idx: contiguous i64 (T, num_topk), 1 <= num_topk <= E. Bit-exact.
/// Throws UserError naming the argument, its value and the requirement;
/// nothing is written then.
void topk_gate(const rt::TensorView &scores, int64_t num_topk,
               const rt::TensorView &topk_idx, CUstream stream = nullptr);

const ops::OpDef &topk_gate_op();

/// Static parameters of a topk_gate kernel (32-bit fields: the bytewise key
/// of the op's kernel table).
struct TopkGateSpec {
  int32_t num_experts = 256;
  int32_t num_topk = 8;
  int32_t block_t = 2;      ///< tokens (rows) a block
  int32_t threads = 32;     ///< one warp: every row reduces within it
  int32_t vector_bytes = 0; ///< 16: the rows are 16-byte aligned
};
TILEJIT_SPEC_FIELDS(TopkGateSpec, num_experts, num_topk, block_t, threads,
                    vector_bytes)

/// The kernel in the DSL (topk_gate.dsl.cpp).
Kernel topk_gate_kernel(const TopkGateSpec &spec);

} // namespace tilejit::moe
