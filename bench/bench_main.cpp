// bench_main.cpp - Benchmark every op at its benchmark shapes and report time,
// bytes moved, GB/s and the fraction of a device-to-device copy of the same
// bytes measured in the same run (the roofline; 4.25 TB/s on the H200).
// Also times the cold compile of each op's kernel, by stage.
#include "registry.h"

#include "tilejit/compiler/compile.h"
#include "tilejit/error.h"
#include "tilejit/runtime/device.h"
#include "tilejit/runtime/driver.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <vector>

using namespace tilejit;

namespace {

struct Case {
  std::string_view op;
  std::vector<int64_t> shape;
};

const Case kCases[] = {
    {"scale_copy", {4096, 7168}},
    {"scale_copy", {8192, 8192}},
    {"scale_copy", {16384, 16384}},
    {"scale_copy", {8191, 8193}},
};

void bench_compile() {
  fmt::print("\ncold compile (DSL build -> PTX), median of 9:\n");
  fmt::print("{:<12} {:>10} {:>10} {:>10} {:>10} {:>10}\n", "op", "build ms",
             "gpu ms", "mlir ms", "ptx ms", "total ms");
  for (const ops::OpInfo &op : ops::all_ops()) {
    std::vector<std::array<double, 5>> runs;
    for (int i = 0; i < 9; ++i) {
      ops::OpArgs args;
      args.shape = op.default_shape;
      auto start = std::chrono::steady_clock::now();
      Kernel k = op.kernel(args);
      std::chrono::duration<double, std::milli> build =
          std::chrono::steady_clock::now() - start;
      CompiledKernel c = compile(k);
      std::array<double, 5> r{build.count(), 0, 0, 0, build.count()};
      for (size_t s = 0; s < c.timings.size() && s < 3; ++s) {
        r[1 + s] = c.timings[s].ms;
        r[4] += c.timings[s].ms;
      }
      runs.push_back(r);
    }
    std::sort(runs.begin(), runs.end(),
              [](auto &a, auto &b) { return a[4] < b[4]; });
    const auto &m = runs[runs.size() / 2];
    fmt::print("{:<12} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.2f}\n",
               op.name, m[0], m[1], m[2], m[3], m[4]);
  }
}

} // namespace

int main() {
  try {
    bench_compile();
    if (!rt::try_driver()) {
      fmt::print("no CUDA driver: {}; GPU benchmarks not run\n",
                 rt::no_driver_reason());
      return 77;
    }
    const rt::Device &device = rt::Device::get();
    fmt::print("\n{} ({} SMs)\n", device.name(), device.sm_count());
    fmt::print("{:<12} {:>12} {:>10} {:>10} {:>10} {:>11} {:>8}  {}\n", "op",
               "shape", "ms", "MB moved", "GB/s", "copy GB/s", "of copy",
               "check");
    bool all_passed = true;
    for (const Case &c : kCases) {
      const ops::OpInfo *op = ops::find_op(c.op);
      ops::OpArgs args;
      args.shape = c.shape;
      ops::RunOptions options;
      options.warmup = 5;
      options.iters = 50;
      ops::RunResult r = op->run(args, options);
      double gbps = r.bytes / (r.ms * 1e6);
      double copy = r.bytes / (r.copy_ms * 1e6);
      fmt::print("{:<12} {:>12} {:>10.4f} {:>10.1f} {:>10.1f} {:>11.1f} "
                 "{:>7.1f}%  {}\n",
                 op->name, r.shape, r.ms, r.bytes / 1e6, gbps, copy,
                 100 * gbps / copy, r.passed ? "ok" : "FAILED");
      all_passed &= r.passed;
    }
    return all_passed ? 0 : 1;
  } catch (const Error &e) {
    fmt::print(stderr, "{}\n", e.what());
    return e.exit_code();
  }
}
