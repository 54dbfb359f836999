// engram_gate.h - The Engram gate on the GPU, forward and backward
// (shared/specs/moe_engram_mhc.md §2.3-2.4, tk21_ops.md §5.2-5.3);
// declared in engram_gate.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::engram {

const ops::OpDef &engram_gate_fwd_op();

/// Static parameters of the forward: a block a token, its hc heads (padded
/// to a power of two) in chunks of `chunk` columns of D.
struct EngramGateFwdSpec {
  int32_t heads = 4;     ///< hc
  int32_t hidden = 7168; ///< D
  int32_t chunk = 1024;  ///< a power of two dividing D
  int32_t save = 1;      ///< dot, gate_score, rstd_x, rstd_k written
  int32_t image = 0;     ///< image_token_mask passed
  int32_t threads = 512;
  int32_t vector_bytes = 0; ///< 16: every row 16-byte aligned
};
TILEJIT_SPEC_FIELDS(EngramGateFwdSpec, heads, hidden, chunk, save, image,
                    threads, vector_bytes)

/// The kernel in the DSL (engram_gate.dsl.cpp).
Kernel engram_gate_fwd_kernel(const EngramGateFwdSpec &spec);

} // namespace tilejit::engram
