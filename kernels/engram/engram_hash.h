// engram_hash.h - Engram's multi-table n-gram hash on the GPU
// (shared/specs/moe_engram_mhc.md §2.1, tk21_ops.md §5.1); declared in
// engram_hash.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::engram {

const ops::OpDef &engram_hash_op();

/// Static parameters: n ids a token, M tables an n-gram; a block hashes
/// block_t tokens of one layer.
struct EngramHashSpec {
  int32_t ngram = 3;  ///< n
  int32_t tables = 8; ///< M
  int32_t image = 0;  ///< image_token_mask passed
  int32_t block_t = 32;
  int32_t threads = 128;
  int32_t vector_bytes = 0; ///< 16: offsets' and out's rows 16-byte aligned
};
TILEJIT_SPEC_FIELDS(EngramHashSpec, ngram, tables, image, block_t, threads,
                    vector_bytes)

/// The kernel in the DSL (engram_hash.dsl.cpp).
Kernel engram_hash_kernel(const EngramHashSpec &spec);

} // namespace tilejit::engram
