// zero_output.h - Zeroing an op's output on the stream of its launch: for
// ops whose kernel adds to an output (group_count, aux_fi) and for calls
// with nothing to compute (gemm's K = 0).
#pragma once

#include "op/op_def.h"

#include <functional>
#include <string>

namespace tilejit::ops {

/// Zeroes `t` (rank 1, or rank 2 with rows of one pitch, strides[0]) with
/// one memset on `stream`; nothing for a tensor of no elements.
void zero_output(const rt::TensorView &t, CUstream stream);

/// An OpDef::special that zeroes output `name` before the kernel runs
/// (returns false, so that the kernel follows).
std::function<bool(const Call &, CUstream)>
zero_before_kernel(std::string name);

} // namespace tilejit::ops
