// apply_rotary.h - TileKernels 2.1's rotary position embedding on the GPU
// (shared/specs/tk21_ops.md §7), one tensor (query or key) a call;
// declared in apply_rotary.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::transform {

const ops::OpDef &apply_rotary_op();

/// Static parameters: a block `tokens` tokens (one after another, each with
/// its own position) of `heads_block` heads; 4 pairs a thread's chunk.
struct ApplyRotarySpec {
  DType dtype = DType::bf16; ///< x's (and out's)
  int32_t rotary = 128;      ///< R: cos then sin of R / 2 frequencies
  int32_t heads_block = 32;  ///< heads a tile (masked past H)
  int32_t tokens = 1;        ///< tokens a block
  int32_t interleaved = 0;   ///< GPT-J pairs (2i, 2i + 1), else NeoX
  int32_t conjugate = 0;     ///< the inverse rotation
  int32_t positions = 0;     ///< 0: p = t; else positions' dtype below
  DType positions_dtype = DType::i32;
  int32_t threads = 128;
  int32_t vector_bytes = 0;       ///< 16: x's and out's rows aligned
  int32_t cache_vector_bytes = 0; ///< 16: the cache's rows aligned
};
TILEJIT_SPEC_FIELDS(ApplyRotarySpec, dtype, rotary, heads_block, tokens,
                    interleaved, conjugate, positions, positions_dtype, threads,
                    vector_bytes, cache_vector_bytes)

/// The kernel in the DSL (apply_rotary.dsl.cpp).
Kernel apply_rotary_kernel(const ApplyRotarySpec &spec);

} // namespace tilejit::transform
