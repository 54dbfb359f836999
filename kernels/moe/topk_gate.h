// topk_gate.h - Row-wise top-k expert indices on the GPU
// (shared/specs/moe_engram_mhc.md §1.1); the CPU reference is topk_gate_ref
// in reference.h.
#pragma once

#include "tilejit/compiler/kernel.h"
#include "tilejit/runtime/spec_key.h"
#include "tilejit/runtime/tensor.h"

#include <cuda.h>

namespace tilejit::moe {

/// Static parameters of a topk_gate kernel; also the bytewise key of the
/// op's kernel table (all 32-bit fields).
struct TopkGateSpec {
  int32_t num_experts = 256;
  int32_t num_topk = 8;
  int32_t block_t = 2;      ///< tokens (rows) a block
  int32_t threads = 32;     ///< one warp: every row reduces within it
  int32_t vector_bytes = 0; ///< 16: the rows are 16-byte aligned
};

/// topk_idx[t, :] = the indices of the num_topk largest scores of row t, in
/// descending score order, ties to the smaller index (a stable descending
/// sort's first columns). scores: contiguous f32 (T, E) with 1 <= E <= 1024;
/// topk_idx: contiguous i64 (T, num_topk), 1 <= num_topk <= E. Bit-exact.
/// Throws UserError naming the argument, its value and the requirement;
/// nothing is written then.
void topk_gate(const rt::TensorView &scores, int64_t num_topk,
               const rt::TensorView &topk_idx, CUstream stream = nullptr);

rt::SpecKey topk_gate_key(const TopkGateSpec &spec);

/// The kernel in the DSL (topk_gate.dsl.cpp).
Kernel topk_gate_kernel(const TopkGateSpec &spec);

/// The specialisation for E experts and K picks (tile rows, vector width
/// for rows whose byte length divides by 16).
TopkGateSpec topk_gate_spec(int64_t num_experts, int64_t num_topk);

} // namespace tilejit::moe
