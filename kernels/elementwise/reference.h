// reference.h - CPU references of the element-wise ops.
#pragma once

#include <cstdint>

namespace tilejit::elementwise {

/// out[i, j] = x[i, j] * scale on host memory, each with its own strides:
/// one float multiply per element, so the GPU must match it bit for bit.
void scale_copy_ref(const float *x, const int64_t x_strides[2], float *out,
                    const int64_t out_strides[2], int64_t rows, int64_t cols,
                    float scale);

} // namespace tilejit::elementwise
