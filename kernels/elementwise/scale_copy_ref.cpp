// scale_copy_ref.cpp - CPU reference of scale_copy: one float multiply per
// element, so the GPU result must match it bit for bit.
#include "elementwise/reference.h"

namespace tilejit::elementwise {

void scale_copy_ref(const float *x, const int64_t x_strides[2], float *out,
                    const int64_t out_strides[2], int64_t rows, int64_t cols,
                    float scale) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      out[i * out_strides[0] + j * out_strides[1]] =
          x[i * x_strides[0] + j * x_strides[1]] * scale;
}

} // namespace tilejit::elementwise
