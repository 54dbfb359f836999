// aux_fi.h - the auxiliary load-balancing loss's expert fractions on the
// GPU (shared/specs/moe_engram_mhc.md §1.11); declared in aux_fi.cpp.
#pragma once

#include "moe/group_count.h"

namespace tilejit::moe {

/// fi[e] = count[e] * E / (T * num_aux_topk) for the expert ids of topk_idx
/// (i64 (T, K), contiguous; -1 and ids outside [0, E) not counted), E =
/// num_experts; fi: f32 (E,), zeroed by the op, then each block's
/// float(count * E) / float(T * num_aux_topk) added atomically, as
/// TileKernels does (a sum in no fixed order: within calc_diff 2e-7 of the
/// reference, which rounds each value once). T = 0: zeros. Throws UserError
/// naming the argument, its value and the requirement; nothing is written
/// then.
void aux_fi(const rt::TensorView &topk_idx, int64_t num_experts,
            int64_t num_aux_topk, const rt::TensorView &fi,
            CUstream stream = nullptr);

const ops::OpDef &aux_fi_op();

/// The kernels in the DSL (aux_fi.dsl.cpp): fi zeroed, then group_count's
/// blocks, whose counts become fractions of the scalar `denominator` =
/// float(T * num_aux_topk), added to it.
Kernel aux_fi_zero_kernel(const GroupCountSpec &spec);
Kernel aux_fi_kernel(const GroupCountSpec &spec);

} // namespace tilejit::moe
