// per_token_cast_run.h - One per_token_cast call on seeded normal inputs,
// with its CPU reference: for the GPU tests, the CLI and the benchmark.
#pragma once

#include "tilejit/dtype.h"

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <string>

namespace tilejit::ops {

class Rotation;

struct PerTokenCastCase {
  DType dtype = DType::bf16;
  int64_t m = 0, k = 0;
  int64_t row_stride = 0; ///< elements between rows of x; 0: k
  int64_t group = 128;    ///< num_per_channels
  bool col_major = false, round_sf = false, packed = false;
  uint64_t seed = 2026;
};

/// Uploads the inputs and computes the reference on construction; `call`
/// runs the op, `check` compares out and out_sf bytewise ("" when equal).
class PerTokenCastRun {
public:
  explicit PerTokenCastRun(const PerTokenCastCase &c);
  ~PerTokenCastRun();
  PerTokenCastRun(PerTokenCastRun &&) noexcept;
  /// Inputs and reference only: CPU work, safe on several threads at once;
  /// `upload` before `call`.
  static PerTokenCastRun prepare(const PerTokenCastCase &c);
  void upload();
  /// Runs the op on `stream`; with a rotation, on its set `set` of the
  /// buffers.
  void call(CUstream stream = nullptr, const Rotation *rotation = nullptr,
            int set = 0) const;
  /// Copies of the buffers for timed calls (see Rotation).
  Rotation rotation(double footprint) const;
  std::string check() const;
  /// Bytes the op must move: x, out and the scales.
  double bytes() const;

private:
  struct State;
  explicit PerTokenCastRun(std::unique_ptr<State> state);
  std::unique_ptr<State> s_;
};

} // namespace tilejit::ops
