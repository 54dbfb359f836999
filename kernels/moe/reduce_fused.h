// reduce_fused.h - MoE's fused rows reduced back to tokens on the GPU
// (shared/specs/moe_engram_mhc.md §1.8); declared in reduce_fused.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::moe {

/// out[t, i] = convert(y), y = acc * sf[0] (or acc without sf), where acc
/// starts at 0.0f and, for k = 0..K-1 in order with p =
/// token_topk_to_pos[t, k] >= 0, acc = fma(x[p, i], s, acc), s =
/// topk_weights[t, k] (1 without weights) times x_sf[p] (with x_sf). x: f32
/// or bf16 (N, H) contiguous, H % 256 == 0; x_sf: f32 (N,) or absent;
/// topk_weights: f32 (T, K) or absent; token_topk_to_pos: i32 (T, K),
/// contiguous, 1 <= K <= 32; sf: f32 (1,), only with an e4m3 out; out:
/// (T, H) of x's dtype, or e4m3 (saturating) for TileKernels'
/// fp8_format='e4m3'. Bit-exact with TileKernels' FMA chain. Throws
/// UserError naming the argument, its value and the requirement; nothing is
/// written then.
void reduce_fused(const rt::TensorView &x, const rt::TensorView &x_sf,
                  const rt::TensorView &topk_weights,
                  const rt::TensorView &token_topk_to_pos,
                  const rt::TensorView &sf, const rt::TensorView &out,
                  CUstream stream = nullptr);

const ops::OpDef &reduce_fused_op();

/// Static parameters of a reduce_fused kernel: a block reduces block_h
/// columns of one token.
struct ReduceFusedSpec {
  DType in_dtype = DType::bf16;
  DType out_dtype = DType::bf16;
  int32_t topk = 6;
  int32_t block_h = 1024;
  int32_t threads = 128;
  int32_t weights = 1;      ///< 1: topk_weights passed
  int32_t x_sf = 0;         ///< 1: x_sf passed
  int32_t sf = 0;           ///< 1: sf passed
  int32_t vector_bytes = 0; ///< 16: x's and out's rows 16-byte aligned
};
TILEJIT_SPEC_FIELDS(ReduceFusedSpec, in_dtype, out_dtype, topk, block_h,
                    threads, weights, x_sf, sf, vector_bytes)

/// The kernel in the DSL (reduce_fused.dsl.cpp).
Kernel reduce_fused_kernel(const ReduceFusedSpec &spec);

} // namespace tilejit::moe
