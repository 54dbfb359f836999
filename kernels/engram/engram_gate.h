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
  /// 0: each pass a loop of loads; 1 to 4: each pass's chunks copied to
  /// shared memory that many stages ahead (the op's `stages`, default 2).
  int32_t stages = 2;
  /// 1: (T, hc D) rows, 2 columns of every head a thread (chunk = 2
  /// threads), loads unrolled; `stages` unused.
  int32_t rows = 0;
};
TILEJIT_SPEC_FIELDS(EngramGateFwdSpec, heads, hidden, chunk, save, image,
                    threads, vector_bytes, stages, rows)

const ops::OpDef &engram_gate_bwd_op();

/// Static parameters of the backward: num_sms persistent blocks, each the
/// tokens [b * ceil(T / num_sms), ...) in turn, its grad_w_partial row
/// added to in place; a token's heads (hc == 4) in (1, hc, chunk) tiles.
struct EngramGateBwdSpec {
  int32_t heads = 4;
  int32_t hidden = 7168; ///< D
  int32_t chunk = 1024;  ///< a power of two dividing D, 8 columns a thread
  int32_t image = 0;     ///< image_token_mask passed
  int32_t threads = 512;
  int32_t vector_bytes = 0; ///< 16: every row 16-byte aligned
  /// 0: each pass a loop of loads; 1 to 4: each pass's chunks copied to
  /// shared memory that many stages ahead (the op's `stages`, default 2).
  int32_t stages = 2;
  /// 2 or 4: each block's grad_w row in registers, a thread all four heads
  /// of that many columns (chunk = registers * threads; `stages`: how many
  /// chunks' loads are issued ahead of a chunk's stores, 0 or 1);
  /// 0: added to in global memory.
  int32_t registers = 0;
};
TILEJIT_SPEC_FIELDS(EngramGateBwdSpec, heads, hidden, chunk, image, threads,
                    vector_bytes, stages, registers)

/// The kernels in the DSL (engram_gate.dsl.cpp).
Kernel engram_gate_fwd_kernel(const EngramGateFwdSpec &spec);
Kernel engram_gate_bwd_kernel(const EngramGateBwdSpec &spec);

} // namespace tilejit::engram
