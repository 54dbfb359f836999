// swiglu_halves.h - How the SwiGLU kernels see x (rows, 2H): its gate and
// up halves as two (rows, H) tensors.
#pragma once

#include "op/op_def.h"

namespace tilejit::quant {

/// Binds the halves of `x` (rows, 2H, unit inner stride) as the kernel
/// tensors `first` (columns 0 .. H - 1) and `second` (H .. 2H - 1).
inline void bind_swiglu_halves(const rt::TensorView &x, ops::KernelArgs &args,
                               const char *first = "gate",
                               const char *second = "up") {
  const int64_t h = x.shape[1] / 2;
  const int64_t half[2] = {x.shape[0], h}, strides[2] = {x.strides[0], 1};
  args.tensor(first, rt::TensorView::strided(x.data, x.dtype, half, strides));
  args.tensor(second,
              rt::TensorView::strided(
                  x.data + static_cast<CUdeviceptr>(h * size_of(x.dtype)),
                  x.dtype, half, strides));
}

} // namespace tilejit::quant
