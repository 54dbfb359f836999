// mhc_multilayer_recompute.h - mHC's activation recompute over a stack of
// sublayers on the GPU (shared/specs/moe_engram_mhc.md §3.9): declared in
// mhc_multilayer_recompute.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::mhc {

const ops::OpDef &mhc_multilayer_recompute_op();

/// The layers one call takes: each list's tensors are the op's tensors
/// `<list>_0` .. `<list>_9` (the kernel's parameters stay under 4 KB).
/// Longer stacks are recomputed in groups of this many layers, each group
/// starting from the residual the one before wrote (the same bits).
inline constexpr int kRecomputeLayers = 10;

/// Static parameters: L layers (P of them with a layer output), a block a
/// token and `chunk` columns of its streams.
struct MhcRecomputeSpec {
  int32_t mhc = 4;
  int32_t layers = 1, posts = 1; ///< L, P (P = L or L - 1)
  int32_t chunk = 1024;
  int32_t threads = 128;
  int32_t vector_bytes = 0; ///< 16: every bf16 row 16-byte aligned
};
TILEJIT_SPEC_FIELDS(MhcRecomputeSpec, mhc, layers, posts, chunk, threads,
                    vector_bytes)

/// The kernel in the DSL (mhc_multilayer_recompute.dsl.cpp).
Kernel mhc_multilayer_recompute_kernel(const MhcRecomputeSpec &spec);

} // namespace tilejit::mhc
