// bench_main.cpp - Benchmark every op at the benchmark cases of its case
// table (kernels/<family>/<op>_test.cpp) and report time, bytes moved, GB/s
// and the fraction of a device-to-device copy of the same bytes measured in
// the same run (the roofline; 4.25 TB/s on the H200), or TFLOP/s for a
// compute-bound op. Also times the cold compile of each op's kernel, by
// stage, the first call of a fresh process and the host cost of a call.
// TILEJIT_BENCH_JSON=FILE also writes the op rows as JSON (JsonReport).
#include "bench_fused_gemm.h"
#include "bench_jit.h"
#include "bench_tma_transpose.h"
#include "run.h"

#include "tilejit/compiler/compile.h"
#include "tilejit/error.h"
#include "tilejit/runtime/device.h"
#include "tilejit/runtime/driver.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <string>
#include <thread>
#include <vector>

using namespace tilejit;

namespace {

harness::RunOptions timed(int iters) {
  harness::RunOptions options;
  options.warmup = 5;
  options.iters = iters;
  return options;
}

/// TileKernels' per_token_cast benchmark grid for bf16 input (packed UE8M0,
/// round_sf): M = 8001 and 4001, every K, every group size, as % of copy.
/// False when a check failed.
bool bench_per_token_cast_grid() {
  const ops::OpDef *op = ops::find_op("per_token_cast");
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
        harness::Case c{.shape = {m, k},
                        .set = {{"num_per_channels",
                                 std::string(g) == "K" ? std::to_string(k) : g},
                                {"use_tma_aligned_col_major_sf", "1"},
                                {"round_sf", "1"},
                                {"use_packed_ue8m0", "1"}}};
        harness::RunResult r = harness::run_case(*op, c, timed(50));
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

/// The rows of bench_cases as JSON, when TILEJIT_BENCH_JSON names a file:
/// rewritten after each row, so that a run cut short keeps what it
/// measured. tilejit.bench (python -m tilejit.bench FILE) draws the chart.
class JsonReport {
public:
  explicit JsonReport(const char *path) : path_(path ? path : "") {}
  void device(std::string name) { device_ = std::move(name); }
  void row(std::string fields) {
    if (path_.empty())
      return;
    rows_.push_back("{" + fields + "}");
    write();
  }
  static std::string text(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\')
        out += '\\';
      out += c;
    }
    return out + "\"";
  }

private:
  void write() const {
    const std::string tmp = path_ + ".tmp";
    if (FILE *f = std::fopen(tmp.c_str(), "w")) {
      fmt::print(f, "{{\"device\": {}, \"rows\": [\n  {}\n]}}\n", text(device_),
                 fmt::join(rows_, ",\n  "));
      std::fclose(f);
      std::rename(tmp.c_str(), path_.c_str());
    } else {
      fmt::print(stderr,
                 "tilejit_bench: cannot write {} (TILEJIT_BENCH_JSON)\n",
                 path_);
    }
  }
  std::string path_, device_;
  std::vector<std::string> rows_;
};

/// Every op's benchmark cases: memory-bound ones against a copy, then the
/// compute-bound ones in TFLOP/s (compare with cuBLAS through torch in the
/// same run: tools/gpu/run.sh).
/// `only` (from --ops a,b@text,c) limits them to the named ops, and an
/// entry op@text to that op's cases whose label holds `text`; empty: all.
bool bench_cases(const std::vector<std::string> &only, bool checked,
                 JsonReport &json) {
  auto wanted = [&](const ops::OpDef &op, const harness::Case &c) {
    if (only.empty())
      return true;
    for (const std::string &entry : only) {
      const size_t at = entry.find('@');
      if (entry.substr(0, at) != op.name)
        continue;
      if (at == std::string::npos ||
          harness::resolve(op, c).label.find(entry.substr(at + 1)) !=
              std::string::npos)
        return true;
    }
    return false;
  };
  bool all_passed = true;
  // TK us: TileKernels' own time for the same call on the H200 (the case
  // table's peer_us), and TK/ours its ratio to ours (above 1: ours faster).
  fmt::print("{:<18} {:>50} {:>9} {:>9} {:>9} {:>10} {:>8} {:>8} {:>8}  {}\n",
             "op", "shape", "ms", "MB moved", "GB/s", "copy GB/s", "of copy",
             "TK us", "TK/ours", "check");
  std::vector<std::pair<const ops::OpDef *, harness::Case>> compute, memory;
  for (const harness::OpTest *t : harness::all_tests()) {
    const ops::OpDef *op = ops::find_op(t->op);
    for (const harness::Case &c : t->cases)
      if ((c.kind & harness::Case::bench) && wanted(*op, c))
        (t->flops ? compute : memory).push_back({op, c});
  }
  // Inputs and references (CPU work, seconds for the big rows) are made
  // for a batch of rows at once on the host's cores; the rows then run on
  // the GPU one at a time.
  const harness::RunOptions options = timed(50);
  const size_t batch = std::max(1u, std::thread::hardware_concurrency());
  for (size_t first = 0; first < memory.size(); first += batch) {
    const size_t last = std::min(memory.size(), first + batch);
    std::vector<std::future<harness::Prepared>> prepared;
    for (size_t i = first; i < last; ++i)
      prepared.push_back(std::async(std::launch::async, [&, i] {
        const auto &[op, c] = memory[i];
        return harness::Prepared::make(harness::resolve(*op, c), options.seed,
                                       checked);
      }));
    for (size_t i = first; i < last; ++i) {
      const auto &[op, c] = memory[i];
      harness::RunResult r;
      try {
        r = prepared[i - first].get().run(options);
      } catch (const Error &e) {
        fmt::print("{:<18} {}: {}\n", op->name, harness::resolve(*op, c).label,
                   e.what());
        std::fflush(stdout);
        all_passed = false;
        continue;
      }
      double gbps = r.bytes / (r.ms * 1e6);
      double copy = r.bytes / (r.copy_ms * 1e6);
      const double peer = c.peer_us;
      fmt::print("{:<18} {:>50} {:>9.4f} {:>9.1f} {:>9.1f} {:>10.1f} "
                 "{:>7.1f}% {:>8} {:>8}  {}\n",
                 op->name, r.shape, r.ms, r.bytes / 1e6, gbps, copy,
                 100 * gbps / copy,
                 peer > 0 ? fmt::format("{:.2f}", peer) : "-",
                 peer > 0 ? fmt::format("{:.2f}", peer / (r.ms * 1e3)) : "-",
                 !checked   ? "unchecked"
                 : r.passed ? "ok"
                            : "FAILED");
      std::fflush(stdout); // a row survives a cut run
      json.row(fmt::format(
          "\"op\": {}, \"shape\": {}, \"us\": {:.3f}, \"bytes\": {:.0f}, "
          "\"gbps\": {:.1f}, \"copy_gbps\": {:.1f}, \"of_copy\": {:.4f}, "
          "\"peer_us\": {}, \"check\": {}",
          JsonReport::text(op->name), JsonReport::text(r.shape), r.ms * 1e3,
          r.bytes, gbps, copy, gbps / copy,
          peer > 0 ? fmt::format("{:.2f}", peer) : "null",
          JsonReport::text(!checked   ? "unchecked"
                           : r.passed ? "ok"
                                      : "FAILED")));
      all_passed &= r.passed;
    }
  }
  fmt::print("\n{:<18} {:>50} {:>9} {:>9}  {}\n", "op", "shape", "ms",
             "TFLOP/s", "check");
  for (const auto &[op, c] : compute) {
    harness::RunResult r;
    try {
      r = harness::run_case(*op, c, timed(30));
    } catch (const Error &e) {
      fmt::print("{:<18} {}: {}\n", op->name, harness::resolve(*op, c).label,
                 e.what());
      all_passed = false;
      continue;
    }
    fmt::print("{:<18} {:>50} {:>9.4f} {:>9.1f}  {}\n", op->name, r.shape, r.ms,
               r.flops / (r.ms * 1e9), r.passed ? "ok" : "FAILED");
    json.row(fmt::format("\"op\": {}, \"shape\": {}, \"us\": {:.3f}, "
                         "\"tflops\": {:.1f}, \"check\": {}",
                         JsonReport::text(op->name), JsonReport::text(r.shape),
                         r.ms * 1e3, r.flops / (r.ms * 1e9),
                         JsonReport::text(r.passed ? "ok" : "FAILED")));
    all_passed &= r.passed;
  }
  return all_passed;
}

} // namespace

int main(int argc, char **argv) {
  try {
    std::string_view mode = argc > 1 ? argv[1] : "";
    if (mode == "--first-call")
      return first_call_child();
    std::vector<std::string> only;
    bool checked = true;
    if (mode == "--ops" && argc > 2) {
      for (std::string_view rest = argv[2]; !rest.empty();) {
        size_t comma = rest.find(',');
        std::string name(rest.substr(0, comma));
        if (!ops::find_op(name.substr(0, name.find('@')))) {
          fmt::print(stderr, "tilejit_bench: --ops: no op named '{}'\n",
                     name.substr(0, name.find('@')));
          return 2;
        }
        only.push_back(name);
        rest = comma == rest.npos ? "" : rest.substr(comma + 1);
      }
      if (argc > 3 && std::string_view(argv[3]) == "--unchecked")
        checked = false;
      else if (argc > 3) {
        fmt::print(stderr,
                   "tilejit_bench: unknown argument '{}' after --ops; "
                   "expected --unchecked or nothing\n",
                   argv[3]);
        return 2;
      }
    } else if (mode == "--unchecked" && argc == 2) {
      checked = false; // every op's rows, no CPU reference
    } else if (!mode.empty() && mode != "--compile" && mode != "--grid" &&
               mode != "--fused-gemm" && mode != "--tma-transpose") {
      fmt::print(
          stderr,
          "tilejit_bench: unknown argument '{}'; expected none (every "
          "benchmark), --compile (the cold-compile table only), --grid "
          "(the per_token_cast grid only), --fused-gemm (the gemm with and "
          "without a fused epilogue only), --tma-transpose "
          "(batched_transpose through TMA pipelines against the op only) or "
          "--ops NAME[@TEXT][,...] "
          "[--unchecked] (those ops' benchmark cases only, with TEXT in "
          "their label; --unchecked: no CPU reference, for rows whose "
          "reference takes minutes), or --unchecked alone (every op's "
          "benchmark cases without their CPU references: a sweep)\n",
          mode);
      return 2;
    }
    // The driver keeps its own cache of the PTX it has compiled
    // (~/.nv/ComputeCache); with it, every compile after the first of a
    // kernel skips ptxas and the cold-compile table would time a cache hit.
    // Must be set before the driver is initialised.
    setenv("CUDA_CACHE_DISABLE", "1", 1);
    bool gpu = rt::try_driver() != nullptr;
    if (mode == "--compile" || mode.empty())
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
    harness::settle_timing();
    if (mode == "--grid")
      return bench_per_token_cast_grid() ? 0 : 1;
    if (mode == "--fused-gemm")
      return bench_fused_gemm() ? 0 : 1;
    if (mode == "--tma-transpose")
      return bench_tma_transpose() ? 0 : 1;
    JsonReport json(std::getenv("TILEJIT_BENCH_JSON"));
    json.device(fmt::format("{} ({} SMs)", device.name(), device.sm_count()));
    bool all_passed = bench_cases(only, checked, json);
    if (mode == "--ops" || mode == "--unchecked")
      return all_passed ? 0 : 1;
    all_passed &= bench_per_token_cast_grid();
    all_passed &= bench_fused_gemm();
    bench_first_call(argv[0]);
    bench_dispatch();
    return all_passed ? 0 : 1;
  } catch (const Error &e) {
    fmt::print(stderr, "{}\n", e.what());
    return e.exit_code();
  }
}
