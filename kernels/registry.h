// registry.h - The table of ops the CLI, the GPU tests and the benchmarks
// reach by name: how to build each op's kernel and how to run and check it.
#pragma once

#include "tilejit/compiler/kernel.h"
#include "tilejit/runtime/spec_key.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilejit::ops {

/// An op invocation as the CLI describes it: `--shape`, `--dtype` and
/// `--set NAME=VALUE` (NAME is the TileKernels argument name).
struct OpArgs {
  std::vector<int64_t> shape;
  std::optional<DType> dtype;
  std::map<std::string, std::string> set;

  /// `--set name=...` as a number, or `fallback`; UserError if not a number.
  double number(std::string_view op, std::string_view name,
                double fallback) const;
};

struct RunOptions {
  int warmup = 3;
  int iters = 0;        ///< timed iterations; 0 runs and checks only
  uint64_t seed = 2026; ///< input generator seed
};

/// What one run on the GPU found.
struct RunResult {
  std::string shape; ///< as printed, e.g. "8192x8192"
  std::string
      check; ///< e.g. "bitwise equal to CPU reference (67108864 elements)"
  bool passed = false;
  double ms = 0;      ///< mean time per call (iters > 0)
  double bytes = 0;   ///< bytes the op must move (read + write)
  double copy_ms = 0; ///< device-to-device copy of the same bytes, same run
  double flops = 0;   ///< floating-point operations of a compute-bound op
};

struct OpInfo {
  std::string_view name;
  std::string_view summary;
  std::vector<std::string_view> params; ///< names `--set` accepts
  std::vector<int64_t> default_shape;
  /// Builds the kernel for this specialisation (throws UserError for bad args).
  std::function<Kernel(const OpArgs &)> kernel;
  /// The specialisation key of that kernel (what the caches are keyed on).
  std::function<rt::SpecKey(const OpArgs &)> key;
  /// Runs on the GPU with seeded inputs, checks against the CPU reference.
  std::function<RunResult(const OpArgs &, const RunOptions &)> run;
};

/// Mean ms of a device-to-device copy that moves `bytes_moved` bytes (read
/// plus write: a copy of half as many), the roofline RunResult::copy_ms
/// compares with; buffers of its own, timed as `options` says.
double copy_roofline_ms(double bytes_moved, const RunOptions &options);

/// Times one throwaway copy, once a process. On the H200 the first op timed
/// in a process reads faster than the same op timed any later (0.3 us a
/// call: a 4 us kernel timed first reads 8% faster), and the copy it is
/// compared with is always timed later. Benchmarks call this before they
/// time anything, so that an op and its copy are timed in the same state.
void settle_timing();

const std::vector<OpInfo> &all_ops();
/// nullptr if no op has this name.
const OpInfo *find_op(std::string_view name);

} // namespace tilejit::ops
