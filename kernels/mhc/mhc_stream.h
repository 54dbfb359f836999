// mhc_stream.h - The mHC ops over a token's streams (shared/specs/
// moe_engram_mhc.md §3.1, §3.5, §3.6; TileKernels 2.1's raw entry points):
// expand_to_mhc_fwd/bwd, mhc_pre_apply_mix_fwd/bwd, mhc_post_fwd/bwd. Each
// block takes one token and `chunk` columns of its H; per-token mixes are
// scalars every thread reads. Declared in expand_to_mhc.cpp,
// mhc_pre_apply_mix.cpp and mhc_post.cpp; their kernels in the .dsl.cpp files
// of those names.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::mhc {

const ops::OpDef &expand_to_mhc_fwd_op();
const ops::OpDef &expand_to_mhc_bwd_op();
const ops::OpDef &mhc_pre_apply_mix_fwd_op();
const ops::OpDef &mhc_pre_apply_mix_bwd_op();
const ops::OpDef &mhc_post_fwd_op();
const ops::OpDef &mhc_post_bwd_op();

/// Static parameters of the stream kernels.
struct MhcStreamSpec {
  int32_t mhc = 4;          ///< streams
  int32_t chunk = 1024;     ///< columns a block (a power of two)
  int32_t threads = 128;    ///< 8 columns a thread at 1024
  int32_t vector_bytes = 0; ///< 16: the rows are 16-byte aligned
};
TILEJIT_SPEC_FIELDS(MhcStreamSpec, mhc, chunk, threads, vector_bytes)

/// The spec of a call over `mhc` streams of H (dimension "H") columns;
/// `tensors` are the bf16 tensors whose rows the kernel reads or writes in
/// vectors.
MhcStreamSpec stream_spec(const ops::Call &c, int64_t mhc,
                          std::initializer_list<std::string_view> tensors);

/// The stream ops' rules: 1 to 16 streams ("mhc") of H >= 1 columns.
std::vector<ops::DimRule> stream_rules();

/// The contiguous `t` of shape (..., a, b) as (N, a, b), N the product of
/// its dims before the last `trailing` (a = 1 for trailing = 1).
rt::TensorView token_rows(const rt::TensorView &t, int trailing, int64_t a,
                          int64_t b);

/// The contiguous `t` of shape (..., b) as (N, b), N the product of its dims
/// before the last `trailing`; or, with `stride` 0, the rows (N, b) that all
/// read the same b values (a per-column vector such as a bias).
rt::TensorView token_matrix(const rt::TensorView &t, int64_t n, int64_t b,
                            int64_t stride);
/// The product of the dims of `t` before its last `trailing` (the tokens).
int64_t tokens_of(const rt::TensorView &t, int trailing);

/// The kernels in the DSL.
Kernel expand_to_mhc_fwd_kernel(const MhcStreamSpec &spec);
Kernel expand_to_mhc_bwd_kernel(const MhcStreamSpec &spec);
Kernel mhc_pre_apply_mix_fwd_kernel(const MhcStreamSpec &spec);
/// A block a token, as mhc_post_bwd's.
Kernel mhc_pre_apply_mix_bwd_kernel(const MhcStreamSpec &spec);
Kernel mhc_post_fwd_kernel(const MhcStreamSpec &spec);
/// A block a token: chunks of its columns in a loop, the sums over H in
/// per-thread partials reduced at the end.
Kernel mhc_post_bwd_kernel(const MhcStreamSpec &spec);

} // namespace tilejit::mhc
