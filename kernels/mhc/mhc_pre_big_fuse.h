// mhc_pre_big_fuse.h - TileKernels 2.1's mhc_pre_big_fuse_fwd on the GPU
// (shared/specs/tk21_ops.md §6.4): from the split-K partials of the mHC
// norm's product, the post and comb mixes and the layer input of each
// token; declared in mhc_pre_big_fuse.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::mhc {

const ops::OpDef &mhc_pre_big_fuse_fwd_op();

/// Static parameters. The first kernel takes block_t tokens a block of 128
/// threads (sinkhorn_normalize's tiles, so that its Sinkhorn is that
/// kernel's); the second is mhc_pre_apply_mix_fwd's (chunk columns of a
/// token a block of apply_threads).
struct MhcBigFuseSpec {
  int32_t mhc = 4; ///< streams, a power of two
  int32_t block_t = 64;
  int32_t repeat = 10;            ///< Sinkhorn's
  uint32_t eps_bits = 0x358637bd; ///< Sinkhorn's eps as float bits (1e-6f)
  int32_t chunk = 1024;
  int32_t apply_threads = 128;
  int32_t vector_bytes = 0; ///< 16: residual's and layer_input's rows
};
TILEJIT_SPEC_FIELDS(MhcBigFuseSpec, mhc, block_t, repeat, eps_bits, chunk,
                    apply_threads, vector_bytes)

/// The kernels in the DSL (mhc_pre_big_fuse.dsl.cpp): the mixes (the
/// partials summed in split order and normalised, as
/// mhc_reduce_partials_and_rmsnorm_fwd; split as mhc_pre_split_mixes_fwd;
/// the comb part through Sinkhorn) writing post_mix, comb_mix and the pre
/// mix to the op's scratch; then the pre-apply over H.
Kernel mhc_pre_big_fuse_mix_kernel(const MhcBigFuseSpec &spec);
Kernel mhc_pre_big_fuse_apply_kernel(const MhcBigFuseSpec &spec);

} // namespace tilejit::mhc
