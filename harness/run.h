// run.h - The one harness: a case of an op resolved through its declaration,
// its inputs generated, the CPU reference, the GPU call, the comparison and
// the timing against a device-to-device copy. Used by the CLI (`run`,
// `bench`, `compile`), the GPU tests and the benchmarks.
#pragma once

#include "op_test.h"

#include "tilejit/runtime/tensor.h"

#include <optional>

namespace tilejit::harness {

struct RunOptions {
  int warmup = 3;
  int iters = 0;        ///< timed iterations; 0 runs and checks only
  uint64_t seed = 2026; ///< input generator seed
};

/// What one run on the GPU found.
struct RunResult {
  std::string shape; ///< the case as printed, e.g. "8001x256 num_topk=8"
  std::string check; ///< "exact against the CPU reference (...)" or the
                     ///< first difference
  bool passed = false;
  double ms = 0;      ///< mean time per call (iters > 0)
  double bytes = 0;   ///< bytes the op must move (read + write)
  double copy_ms = 0; ///< device-to-device copy of the same bytes, same run
  double flops = 0;   ///< floating-point operations of a compute-bound op
  uint64_t seed = 0;  ///< the inputs' seed (`tilejit run --seed` takes it)
};

/// Elements a layout's storage spans (0 when it has none): what a buffer of
/// it holds.
int64_t extent(const ops::TensorShape &t);

/// A case resolved against the op's declaration: every parameter typed,
/// every dimension and dtype known. UserError for a shape, parameter or
/// dtype the declaration does not take.
struct Resolved {
  const ops::OpDef *op = nullptr;
  const OpTest *test = nullptr;
  std::vector<ops::ParamValue> params;   ///< declaration order
  std::vector<ops::TensorShape> tensors; ///< declaration order
  /// Per tensor: an optional input left out (`--set NAME=none`).
  std::vector<bool> absent;
  std::string label; ///< "8001x256 num_topk=8": what was asked for
  std::map<std::string, Fill> fills;   ///< the case's own (Case::fills)
  std::map<std::string, int64_t> dims; ///< the named dimensions' sizes
};
Resolved resolve(const ops::OpDef &op, const Case &c);

/// The kernel and key of a resolved case, as the JIT would compile it for
/// tensors of these shapes (contiguous, 256-byte-aligned; padded rows as
/// the case says), without a GPU.
ops::Call bind_for_compile(const Resolved &r,
                           std::vector<rt::TensorView> &storage);

/// Inputs and the reference: CPU work, safe on several threads at once.
class Prepared {
public:
  /// `reference` false: inputs only; run() then times without checking
  /// (its result says "not checked").
  static Prepared make(const Resolved &r, uint64_t seed, bool reference = true);
  /// Uploads, calls the op on the GPU, checks; with options.iters > 0 also
  /// times it (and a copy of the same bytes).
  RunResult run(const RunOptions &options) const;
  /// Checks outputs a call wrote (in declaration order among the outputs,
  /// each in its resolved layout; an empty HostTensor for one left out)
  /// against the reference, as run() does: `check`, `passed` and `flops` of
  /// the result. Where the reference took CUDA's expf it runs again with the
  /// GPU's values, so that needs a GPU.
  RunResult check(std::vector<ref::HostTensor> outputs) const;
  const Resolved &resolved() const { return r_; }
  /// The filled inputs and the reference's outputs.
  const RunData &data() const { return data_; }

private:
  Resolved r_;
  RunData data_;
  /// The distinct arguments of the reference's ref::cuda_expf calls: run()
  /// computes them on the GPU and the reference again with those values.
  std::vector<float> expf_args_;
  bool checked_ = true;
};

/// resolve + Prepared::make + run.
RunResult run_case(const ops::OpDef &op, const Case &c,
                   const RunOptions &options);

/// Runs `cases` of `op`, preparing the CPU references of a batch on every
/// core while the GPU runs the cases one by one; `done` sees each result.
void run_cases(
    const ops::OpDef &op, const std::vector<Case> &cases,
    const RunOptions &options,
    const std::function<void(const Case &, const RunResult &)> &done);

/// Mean ms of a device-to-device copy that moves `bytes_moved` bytes (read
/// plus write), the roofline of memory-bound benchmarks; timed as `options`
/// says, buffers of its own.
double copy_roofline_ms(double bytes_moved, const RunOptions &options);

/// Times one throwaway copy, once a process: the first op timed in a
/// process reads faster than later ones (0.3 us a call on the H200), and
/// the copy it is compared with is always timed later.
void settle_timing();

} // namespace tilejit::harness
