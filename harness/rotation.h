// rotation.h - Copies of an op's device buffers, so that the benchmarks time
// calls whose data is not left in the L2 cache by the call before.
#pragma once

#include "tilejit/runtime/buffer.h"
#include "tilejit/runtime/tensor.h"

#include <vector>

namespace tilejit::harness {

/// Timed calls rotate among `sets()` sets of an op's buffers: set 0 is the
/// buffers themselves, the others device copies of them. Consecutive calls
/// of a rotation touch at least kRotationBytes between two uses of one set,
/// five times the H200's 50 MB L2, so each call reads its inputs from device
/// memory as TileKernels' benchmarks do (they clear the L2 before each call).
class Rotation {
public:
  static constexpr double kRotationBytes = 256e6;
  static constexpr int kMaxSets = 64;

  /// `footprint`: bytes one call touches (its RunResult::bytes).
  Rotation(std::vector<const rt::DeviceBuffer *> buffers, double footprint);

  int sets() const { return static_cast<int>(copies_.size()) + 1; }
  /// Address `p`, which points into one of the buffers, moved to set
  /// `set % sets()`. Throws InternalError when it points into none.
  CUdeviceptr at(CUdeviceptr p, int set) const;
  /// `view` moved to set `set % sets()` (its data as for `at`).
  rt::TensorView at(const rt::TensorView &view, int set) const {
    rt::TensorView moved = view;
    moved.data = at(view.data, set);
    return moved;
  }

private:
  std::vector<const rt::DeviceBuffer *> buffers_;
  std::vector<std::vector<rt::DeviceBuffer>> copies_; ///< [set - 1][buffer]
};

} // namespace tilejit::harness
