// apply_rotary.h - TileKernels 2.1's rotary position embedding on the GPU
// (shared/specs/tk21_ops.md §7), one tensor (query or key) a call;
// declared in apply_rotary.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::transform {

const ops::OpDef &apply_rotary_op();

/// TileKernels' apply_rotary: rotates the heads of `query`, and of `key`
/// unless ops::absent(), in place (one launch each, query first) by the cos
/// and sin of `cos_sin_cache`'s row (f32 (L, R): cos, then sin) at each
/// token's position p = int32(seqlen_offset + positions[b, t]), or + t
/// with `positions` absent; NeoX pairs (i, i + R/2), or GPT-J (2i, 2i + 1)
/// when `interleaved`; the inverse rotation when `conjugate`. query: bf16 or
/// f32 (T, Hq, R) or (B, T, Hq, R), R 64 or 128, stride 1 along R; key:
/// query's dtype, rank and tokens, Hk heads; positions: i32 or i64 (T,) or
/// (B, T). A position outside [0, L) rotates by cos = sin = 0. Bit-exact
/// against the reference. Throws UserError naming the argument, its value
/// and the requirement; nothing is written then (both calls are validated
/// before either launches).
void apply_rotary(const rt::TensorView &query,
                  const rt::TensorView &cos_sin_cache,
                  const rt::TensorView &key, const rt::TensorView &positions,
                  bool interleaved = false, bool conjugate = false,
                  int64_t seqlen_offset = 0, CUstream stream = nullptr);

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
