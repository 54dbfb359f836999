// batched_transpose_weight_sf.h - TileKernels 2.1's batched_transpose_weight_sf
// (shared/specs/tk21_ops.md §3.7) on the GPU: a weight's power-of-two f32
// block scales as the two packed-UE8M0 layouts of a grouped gemm; declared
// in batched_transpose_weight_sf.cpp, the CPU reference is
// batched_transpose_weight_sf_ref in reference.h.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

#include <utility>
#include <vector>

namespace tilejit::quant {

/// For each weight w: sfs[w], its f32 block scales (Nn, Nk) or (G, Nn, Nk),
/// contiguous, every value a positive power of two or 0, n = Nn x bs and
/// k = Nk x bs multiples of 128 (bs = block_size, 32 or 128), G > 0; into
/// outs[w] = (sf0, sf1), int32: sf0 (G, n, ceil(Nk / 4)) strides (P0 n, 1, n),
/// byte j of [g, r, p] the UE8M0 exponent of sf[g, r / bs, 4p + j]; sf1
/// (G, k, ceil(Nn / 4)) strides (P1 k, 1, k), byte j of [g, c, q] that of
/// sf[g, 4q + j, c / bs], or with transpose_sf1s[w] the same storage as
/// (G, P1, k) strides (P1 k, k, 1); bytes past Nk (Nn) are 0, the G
/// dimension only for a 3-D sf. A value that is not a power of two or 0
/// gives the byte 0xFF (UE8M0's NaN; TileKernels device-asserts). One launch
/// a weight. Throws UserError naming the argument, its value and the
/// requirement; nothing is written then.
void batched_transpose_weight_sf(
    const std::vector<rt::TensorView> &sfs, int64_t block_size,
    const std::vector<bool> &transpose_sf1s,
    const std::vector<std::pair<rt::TensorView, rt::TensorView>> &outs,
    CUstream stream = nullptr);

const ops::OpDef &batched_transpose_weight_sf_op();

/// Static parameters of a batched_transpose_weight_sf kernel: a block takes
/// four rows of scales of one group, `cols` scales of each, and writes
/// sf0's 4 x cols / 4 x bs words of those rows and sf1's cols x bs words of
/// their word of four rows.
struct TransposeWeightSfSpec {
  int32_t block_size = 128; ///< bs
  int32_t cols = 8;         ///< scales a row a block
  int32_t threads = 128;    ///< bs
  int32_t vector_bytes = 0; ///< 16: both outputs 16-byte aligned
};
TILEJIT_SPEC_FIELDS(TransposeWeightSfSpec, block_size, cols, threads,
                    vector_bytes)

/// The kernel in the DSL (batched_transpose_weight_sf.dsl.cpp).
Kernel batched_transpose_weight_sf_kernel(const TransposeWeightSfSpec &spec);

} // namespace tilejit::quant
