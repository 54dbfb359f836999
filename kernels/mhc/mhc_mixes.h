// mhc_mixes.h - The mHC ops on a token's mixes (shared/specs/
// moe_engram_mhc.md §3.4, §3.7; TileKernels 2.1's raw entry points):
// mhc_head_compute_mix_fwd/bwd and mhc_pre_split_mixes_fwd, element-wise over
// (tokens, mixes) tiles of 1024 values a block. Declared in
// mhc_head_compute_mix.cpp and mhc_pre_split_mixes.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::mhc {

const ops::OpDef &mhc_head_compute_mix_fwd_op();
const ops::OpDef &mhc_head_compute_mix_bwd_op();
const ops::OpDef &mhc_pre_split_mixes_fwd_op();

/// Static parameters of the mix kernels (the scales, biases, eps and
/// post_mult are run-time values).
struct MhcMixSpec {
  int32_t mhc = 4;       ///< streams
  int32_t block_t = 256; ///< tokens a block
  int32_t threads = 128;
  int32_t vector_bytes = 0; ///< 16: rows and the mixes' parts 16-byte aligned
};
TILEJIT_SPEC_FIELDS(MhcMixSpec, mhc, block_t, threads, vector_bytes)

/// The kernels in the DSL.
Kernel mhc_head_compute_mix_fwd_kernel(const MhcMixSpec &spec);
/// num_sms blocks, each over the token tiles b, b + num_sms, ...: the input
/// gradient, and the block's partial sums of the scale and base gradients.
Kernel mhc_head_compute_mix_bwd_kernel(const MhcMixSpec &spec);
Kernel mhc_pre_split_mixes_fwd_kernel(const MhcMixSpec &spec);

} // namespace tilejit::mhc
