// rotation.cpp - Rotation: device copies of an op's buffers.
#include "rotation.h"

#include "tilejit/error.h"
#include "tilejit/runtime/stream.h"

#include <algorithm>
#include <cmath>

namespace tilejit::harness {

Rotation::Rotation(std::vector<const rt::DeviceBuffer *> buffers,
                   double footprint)
    : buffers_(std::move(buffers)) {
  const double sets = footprint > 0 ? std::ceil(kRotationBytes / footprint) : 1;
  const int extra = static_cast<int>(std::clamp(sets, 1.0, 1.0 * kMaxSets)) - 1;
  copies_.resize(static_cast<size_t>(extra));
  for (std::vector<rt::DeviceBuffer> &set : copies_)
    for (const rt::DeviceBuffer *b : buffers_) {
      set.emplace_back(std::max<size_t>(b->size(), 1));
      set.back().copy_from(*b, b->size());
    }
  // The copies ran on the legacy default stream, which the timing's own
  // (non-blocking) stream does not wait for.
  if (!copies_.empty())
    rt::synchronize(rt::kDefaultStream);
}

CUdeviceptr Rotation::at(CUdeviceptr p, int set) const {
  const auto s = static_cast<size_t>(set % sets());
  for (size_t i = 0; i < buffers_.size(); ++i) {
    const rt::DeviceBuffer &b = *buffers_[i];
    if (p < b.ptr() || p >= b.ptr() + std::max<size_t>(b.size(), 1))
      continue;
    return s == 0 ? p : copies_[s - 1][i].ptr() + (p - b.ptr());
  }
  throw InternalError("Rotation::at: the address points into none of the "
                      "rotated buffers");
}

} // namespace tilejit::harness
