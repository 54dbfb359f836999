// bench_main.cpp - Benchmark every op at its benchmark shapes and report time,
// bytes moved, GB/s and the fraction of a device-to-device copy of the same
// bytes measured in the same run (the roofline; 4.25 TB/s on the H200).
// Also times the cold compile of each op's kernel, by stage.
#include "bench_jit.h"
#include "registry.h"

#include "tilejit/compiler/compile.h"
#include "tilejit/error.h"
#include "tilejit/runtime/device.h"
#include "tilejit/runtime/driver.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <optional>
#include <vector>

using namespace tilejit;

namespace {

struct Case {
  std::string_view op;
  std::vector<int64_t> shape;
  std::optional<DType> dtype = std::nullopt;
  std::map<std::string, std::string> set = {};
};

/// per_token_cast's benchmark flags (the original benchmarks packed UE8M0).
std::map<std::string, std::string> packed(std::string group) {
  return {{"num_per_channels", group}, {"use_packed_ue8m0", "1"}};
}

const Case kCases[] = {
    {"scale_copy", {4096, 7168}},
    {"scale_copy", {8192, 8192}},
    {"scale_copy", {16384, 16384}},
    {"scale_copy", {8191, 8193}},
    {"batched_transpose", {8, 4032, 7168}, DType::bf16},
    {"batched_transpose", {8, 4032, 7168}, DType::e4m3},
    {"batched_transpose", {8, 4032, 7168}, DType::f32},
    {"batched_transpose", {32, 4096, 4096}, DType::bf16},
    {"per_token_cast", {8001, 7168}, DType::bf16, packed("128")},
    {"per_token_cast", {8001, 2048}, DType::bf16, packed("128")},
    {"per_token_cast", {4001, 576}, DType::bf16, packed("128")},
    {"per_token_cast", {8001, 7168}, DType::bf16, packed("32")},
    {"per_token_cast", {8001, 7168}, DType::bf16, packed("7168")},
    {"per_token_cast", {8001, 7168}, DType::f32, packed("128")},
    {"topk_gate", {8001, 256}, std::nullopt, {{"num_topk", "8"}}},
    {"topk_gate", {8001, 72}, std::nullopt, {{"num_topk", "6"}}},
    {"sinkhorn_normalize", {2, 4096, 4, 4}},
};

/// Compute-bound cases, reported in TFLOP/s (compare with cuBLAS through
/// torch in the same run: tools/gpu/run.sh).
const Case kGemmCases[] = {
    {"gemm", {8192, 8192, 8192}, DType::bf16},
    {"gemm", {8192, 8192, 8192}, DType::e4m3},
    {"gemm", {8192, 8192, 8192}, DType::f32},
    {"gemm", {4096, 4096, 4096}, DType::bf16},
    {"gemm", {8192, 7168, 2048}, DType::bf16},
};

/// TileKernels' per_token_cast benchmark grid for bf16 input (packed UE8M0,
/// round_sf): M = 8001 and 4001, every K, every group size, as % of copy.
/// False when a check failed.
bool bench_per_token_cast_grid() {
  bool all_passed = true;
  double lowest = 1e9;
  std::string lowest_at;
  const char *groups[] = {"32", "64", "128", "K"};
  for (int64_t m : {8001, 4001}) {
    fmt::print("\nper_token_cast, TileKernels' benchmark grid (bf16, M = {}, "
               "packed UE8M0): % of copy\n{:>6}",
               m, "K");
    for (const char *g : groups)
      fmt::print(" {:>12}", fmt::format("group {}", g));
    fmt::print("\n");
    for (int64_t k : {576, 2048, 2560, 3072, 4096, 6144, 7168}) {
      fmt::print("{:>6}", k);
      for (const char *g : groups) {
        ops::OpArgs args;
        args.shape = {m, k};
        args.dtype = DType::bf16;
        args.set = packed(std::string(g) == "K" ? std::to_string(k) : g);
        ops::RunOptions options;
        options.warmup = 5;
        options.iters = 50;
        ops::RunResult r = ops::find_op("per_token_cast")->run(args, options);
        double fraction = 100 * r.copy_ms / r.ms;
        fmt::print(" {:>11.1f}%{}", fraction, r.passed ? "" : "!");
        if (fraction < lowest) {
          lowest = fraction;
          lowest_at = fmt::format("M = {}, K = {}, group {}", m, k, g);
        }
        all_passed &= r.passed;
      }
      fmt::print("\n");
    }
  }
  fmt::print("lowest: {:.1f}% of copy at {} ('!' marks a failed check)\n",
             lowest, lowest_at);
  return all_passed;
}

} // namespace

int main(int argc, char **argv) {
  try {
    std::string_view mode = argc > 1 ? argv[1] : "";
    if (mode == "--first-call")
      return first_call_child();
    if (!mode.empty() && mode != "--compile" && mode != "--grid") {
      fmt::print(
          stderr,
          "tilejit_bench: unknown argument '{}'; expected none (every "
          "benchmark), --compile (the cold-compile table only) or --grid "
          "(the per_token_cast grid only)\n",
          mode);
      return 2;
    }
    // The driver keeps its own cache of the PTX it has compiled
    // (~/.nv/ComputeCache); with it, every compile after the first of a
    // kernel skips ptxas and the cold-compile table would time a cache hit.
    // Must be set before the driver is initialised.
    setenv("CUDA_CACHE_DISABLE", "1", 1);
    bool gpu = rt::try_driver() != nullptr;
    if (mode != "--grid")
      bench_cold_compile(gpu);
    if (mode == "--compile")
      return 0;
    if (!gpu) {
      fmt::print("no CUDA driver: {}; GPU benchmarks not run\n",
                 rt::no_driver_reason());
      return 77;
    }
    const rt::Device &device = rt::Device::get();
    fmt::print("\n{} ({} SMs)\n", device.name(), device.sm_count());
    ops::settle_timing();
    if (mode == "--grid")
      return bench_per_token_cast_grid() ? 0 : 1;
    fmt::print("{:<18} {:>42} {:>9} {:>9} {:>9} {:>10} {:>8}  {}\n", "op",
               "shape", "ms", "MB moved", "GB/s", "copy GB/s", "of copy",
               "check");
    bool all_passed = true;
    for (const Case &c : kCases) {
      const ops::OpInfo *op = ops::find_op(c.op);
      ops::OpArgs args;
      args.shape = c.shape;
      args.dtype = c.dtype;
      args.set = c.set;
      ops::RunOptions options;
      options.warmup = 5;
      options.iters = 50;
      ops::RunResult r = op->run(args, options);
      double gbps = r.bytes / (r.ms * 1e6);
      double copy = r.bytes / (r.copy_ms * 1e6);
      fmt::print("{:<18} {:>42} {:>9.4f} {:>9.1f} {:>9.1f} {:>10.1f} "
                 "{:>7.1f}%  {}\n",
                 op->name, r.shape, r.ms, r.bytes / 1e6, gbps, copy,
                 100 * gbps / copy, r.passed ? "ok" : "FAILED");
      all_passed &= r.passed;
    }
    all_passed &= bench_per_token_cast_grid();
    fmt::print("\n{:<18} {:>42} {:>9} {:>9}  {}\n", "op", "shape", "ms",
               "TFLOP/s", "check");
    for (const Case &c : kGemmCases) {
      ops::OpArgs args;
      args.shape = c.shape;
      args.dtype = c.dtype;
      ops::RunOptions options;
      options.warmup = 5;
      options.iters = 30;
      ops::RunResult r = ops::find_op(c.op)->run(args, options);
      fmt::print("{:<18} {:>42} {:>9.4f} {:>9.1f}  {}\n", c.op, r.shape, r.ms,
                 r.flops / (r.ms * 1e9), r.passed ? "ok" : "FAILED");
      all_passed &= r.passed;
    }
    bench_first_call(argv[0]);
    bench_dispatch();
    return all_passed ? 0 : 1;
  } catch (const Error &e) {
    fmt::print(stderr, "{}\n", e.what());
    return e.exit_code();
  }
}
