// mhc_mixes.h - The mHC ops on a token's mixes (shared/specs/
// moe_engram_mhc.md §3.4, §3.7; TileKernels 2.1's raw entry points):
// mhc_head_compute_mix_fwd/bwd and mhc_pre_split_mixes_fwd/bwd, element-wise
// over (tokens, mixes) tiles of 1024 values a block. Declared in
// mhc_head_compute_mix.cpp, mhc_pre_split_mixes.cpp and
// mhc_pre_split_mixes_bwd.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::mhc {

const ops::OpDef &mhc_head_compute_mix_fwd_op();
const ops::OpDef &mhc_head_compute_mix_bwd_op();
const ops::OpDef &mhc_pre_split_mixes_fwd_op();
const ops::OpDef &mhc_pre_split_mixes_bwd_op();

/// mhc_pre_split_mixes_bwd's blocks: each writes a row of partial sums
/// (the base's gradient, then the scale's terms, a column each) to a
/// scratch of this many rows that its second kernel adds up.
inline constexpr int32_t kSplitMixesPartials = 128;

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
/// kSplitMixesPartials blocks over tiles of block_t tokens: the input
/// gradient, and a scratch row of partial sums a block; then one block adds
/// the rows into mhc_base_grad and mhc_scale_grad.
Kernel mhc_pre_split_mixes_bwd_kernel(const MhcMixSpec &spec);
Kernel mhc_pre_split_mixes_bwd_sum_kernel(const MhcMixSpec &spec);

} // namespace tilejit::mhc
