// kernel_cases.h - An op's cases narrowed to one a distinct set of kernels:
// what a sanitizer run needs (racecheck and synccheck look at the hazards of
// a block's code, which its specialisation fixes), at the least cost under
// the tool (the fewest bytes of tensors among the cases that compile to the
// same kernels).
#pragma once

#include "op_test.h"

#include <vector>

namespace tilejit::harness {

/// Of `cases` (an op's, in table order), for each distinct list of kernel
/// keys (every kernel of the call, as bind_for_compile binds the case) the
/// case whose tensors span the fewest bytes, preferring one without an
/// empty tensor (which may launch nothing), the first such on a tie; kept
/// in table order. A case that does not resolve or bind is kept (its run
/// reports why).
std::vector<Case> one_case_per_kernels(const ops::OpDef &op,
                                       const std::vector<Case> &cases);

} // namespace tilejit::harness
