// zero_output.cpp - Zeroing an op's output with the driver's 2-D memset.
#include "op/zero_output.h"

#include "tilejit/runtime/driver.h"

namespace tilejit::ops {

void zero_output(const rt::TensorView &t, CUstream stream) {
  if (t.numel() == 0)
    return;
  const size_t elt = size_of(t.dtype);
  const int last = t.rank - 1;
  const auto width = static_cast<size_t>(t.shape[last]) * elt;
  const auto rows = static_cast<size_t>(t.numel() / t.shape[last]);
  const size_t pitch = t.rank >= 2 && t.shape[last - 1] > 1
                           ? static_cast<size_t>(t.strides[last - 1]) * elt
                           : width;
  TILEJIT_CU_CHECK(cuMemsetD2D8Async(t.data, pitch, 0, width, rows, stream));
}

} // namespace tilejit::ops
