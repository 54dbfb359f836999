// zero_output.h - Zeroing an op's output on the stream of its launch, for
// calls with nothing to compute (gemm's K = 0). (group_count and aux_fi,
// whose kernels add to their outputs, zero them with a programmatic kernel
// of their own, which their counting overlaps: group_count_dsl.h.)
#pragma once

#include "op/op_def.h"

namespace tilejit::ops {

/// Zeroes `t` (rank 1, or rank 2 with rows of one pitch, strides[0]) with
/// one memset on `stream`; nothing for a tensor of no elements.
void zero_output(const rt::TensorView &t, CUstream stream);

} // namespace tilejit::ops
