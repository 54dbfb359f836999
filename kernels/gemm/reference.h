// reference.h - CPU reference of the gemm family.
#pragma once

#include "common/host_tensor.h"

namespace tilejit::gemm {

using ref::HostTensor;

/// C = A * B^T for bf16 or f16 A (M, K) and B (N, K) (same dtype), summed in
/// float64 and rounded once to `out_dtype` (bf16, f16 or f32): the value a
/// GPU's f32 accumulation approximates.
HostTensor gemm_ref(const HostTensor &a, const HostTensor &b, DType out_dtype);

/// Row `row` of gemm_ref's result in float64 (for spot checks of large
/// products).
std::vector<double> gemm_ref_row(const HostTensor &a, const HostTensor &b,
                                 int64_t row);

} // namespace tilejit::gemm
