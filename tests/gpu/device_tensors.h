// device_tensors.h - Device copies of host tensors for the GPU tests of C++
// entries: upload, read back, overwrite.
#pragma once

#include "common/host_tensor.h"

#include "tilejit/runtime/buffer.h"
#include "tilejit/runtime/tensor.h"

#include <memory>
#include <vector>

namespace tilejit::gpu_test {

/// A device copy of a contiguous host tensor, and its view.
struct Device {
  std::vector<std::unique_ptr<rt::DeviceBuffer>> buffers;
  rt::TensorView put(const ref::HostTensor &t) {
    const size_t bytes = static_cast<size_t>(t.numel()) * size_of(t.dtype());
    buffers.push_back(std::make_unique<rt::DeviceBuffer>(bytes));
    if (bytes)
      buffers.back()->upload(t.raw(), bytes);
    return rt::TensorView::contiguous(buffers.back()->ptr(), t.dtype(),
                                      t.shape());
  }
  /// `like`'s dtype and shape, filled from the device view `v` (one of
  /// put's).
  ref::HostTensor get(const rt::TensorView &v,
                      const ref::HostTensor &like) const {
    ref::HostTensor t = ref::HostTensor::zeros(like.dtype(), like.shape());
    for (const auto &b : buffers)
      if (b->ptr() == v.data && t.numel() > 0)
        b->download(t.raw(),
                    static_cast<size_t>(t.numel()) * size_of(t.dtype()));
    return t;
  }
  /// Overwrites the device view `v` (one of put's) with `t`.
  void set(const rt::TensorView &v, const ref::HostTensor &t) {
    for (const auto &b : buffers)
      if (b->ptr() == v.data && t.numel() > 0)
        b->upload(t.raw(), static_cast<size_t>(t.numel()) * size_of(t.dtype()));
  }
};

} // namespace tilejit::gpu_test
