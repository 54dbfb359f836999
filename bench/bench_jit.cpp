// bench_jit.cpp - JIT figures: cold compile by stage (DSL build -> cubin),
// the first call of a fresh process with a warm disk cache, and the
// steady-state host cost of an op call against a raw cuLaunchKernelEx of the
// same cubin.
#include "bench_jit.h"

#include "common/abi.h"
#include "common/jit.h"
#include "elementwise/scale_copy.h"
#include "op/typed_op.h"
#include "run.h"

#include "tilejit/error.h"
#include "tilejit/runtime/buffer.h"
#include "tilejit/runtime/driver.h"
#include "tilejit/runtime/launch.h"
#include "tilejit/runtime/module.h"
#include "tilejit/runtime/ptxas.h"
#include "tilejit/runtime/stream.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>
#include <optional>
#include <vector>

using namespace tilejit;
using Clock = std::chrono::steady_clock;

namespace {
double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
} // namespace

void bench_cold_compile(bool with_driver) {
  // build, the compiler's stages (gpu, mlir, llvm, ptx), ptxas (whole
  // program, or the driver's JIT linker with its cache off: see main), load
  constexpr size_t kStages = 7;
  std::optional<std::string> ptxas = rt::find_ptxas();
  std::string maker = ptxas ? fmt::format("ptxas {}", *ptxas)
                            : "the driver's JIT linker, its cache off";
  fmt::print("\ncold compile, DSL build -> PTX{}, median of 9 (ms):\n",
             with_driver ? fmt::format(" -> cubin ({}) -> loaded module", maker)
                         : std::string());
  fmt::print("{:<19} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>8} {:>8}\n",
             "op", "build", "gpu", "mlir", "llvm", "ptx", "ptxas", "load",
             "total", "tilejit");
  for (const ops::OpDef *op : ops::all_ops()) {
    std::vector<double> stage[kStages], total, ours;
    // The kernel of the op's default shape.
    const harness::Resolved resolved = harness::resolve(*op, {});
    std::vector<rt::TensorView> views;
    const ops::Call call = harness::bind_for_compile(resolved, views);
    for (int i = 0; i < 9; ++i) {
      auto start = Clock::now();
      Kernel k = op->kernel(call);
      stage[0].push_back(ms_since(start));
      CompiledKernel c = compile(k);
      if (c.timings.size() != 4)
        throw InternalError(
            fmt::format("compile reported {} stage timings; the "
                        "benchmark expects 4 (gpu, mlir, llvm, ptx)",
                        c.timings.size()));
      for (size_t s = 0; s < 4; ++s)
        stage[1 + s].push_back(c.timings[s].ms);
      double sum = stage[0].back();
      for (const auto &t : c.timings)
        sum += t.ms;
      ours.push_back(sum);
      if (with_driver) {
        auto t = Clock::now();
        rt::LinkResult cubin = rt::ptx_to_cubin(c.ptx, c.name);
        stage[5].push_back(ms_since(t));
        t = Clock::now();
        rt::Module m = rt::Module::load(cubin.cubin);
        m.function(c.name.c_str());
        stage[6].push_back(ms_since(t));
        sum += stage[5].back() + stage[6].back();
      } else {
        stage[5].push_back(0);
        stage[6].push_back(0);
      }
      total.push_back(sum);
    }
    fmt::print("{:<19}", op->name);
    for (auto &s : stage)
      fmt::print(" {:>7.2f}", median(s));
    fmt::print(" {:>8.2f} {:>8.2f}\n", median(total), median(ours));
  }
}

/// In a child process: set up the context and buffers (not timed), then
/// time the first scale_copy call (cache lookup, disk read and verify,
/// module load, launch) and print its milliseconds.
int first_call_child() {
  rt::DeviceBuffer x(64 * 128 * 4), out(64 * 128 * 4);
  rt::synchronize(nullptr);
  auto vx = rt::TensorView::contiguous(x.ptr(), DType::f32, {64, 128});
  auto vo = rt::TensorView::contiguous(out.ptr(), DType::f32, {64, 128});
  auto start = Clock::now();
  elementwise::scale_copy(vx, vo, 2.0f);
  double first = ms_since(start);
  start = Clock::now();
  elementwise::scale_copy(vx, vo, 2.0f);
  double second = ms_since(start);
  rt::synchronize(nullptr);
  std::printf("%.4f %.4f\n", first, second);
  return 0;
}

void bench_first_call(const char *self) {
  std::string dir = fmt::format("/tmp/tilejit-bench-cache-{}", getpid());
  std::string cmd =
      fmt::format("TILEJIT_CACHE_DIR={} '{}' --first-call", dir, self);
  fmt::print("\nfirst scale_copy call of a fresh process (ms; the second call "
             "beside it):\n");
  std::system(fmt::format("rm -rf {}", dir).c_str());
  auto run = [&](const char *what) {
    FILE *p = popen(cmd.c_str(), "r");
    double first = -1, second = -1;
    if (p && std::fscanf(p, "%lf %lf", &first, &second) == 2)
      fmt::print("  {:<44} first {:8.3f}   second {:8.4f}\n", what, first,
                 second);
    else
      fmt::print("  {:<44} (child failed)\n", what);
    if (p)
      pclose(p);
  };
  run("empty disk cache (compile, link, load)");
  for (int i = 0; i < 3; ++i)
    run("warm disk cache (read, verify, load)");
  std::system(fmt::format("rm -rf {}", dir).c_str());
}

void bench_dispatch() {
  // A 1x1 tensor: the kernel is as short as a kernel gets; what is measured
  // is the host's time to enqueue, in batches that keep the queue short.
  rt::DeviceBuffer x(4), out(4);
  auto vx = rt::TensorView::contiguous(x.ptr(), DType::f32, {1, 1});
  auto vo = rt::TensorView::contiguous(out.ptr(), DType::f32, {1, 1});
  elementwise::scale_copy(vx, vo, 2.0f); // load
  rt::synchronize(nullptr);

  const ops::OpDef &def = elementwise::scale_copy_op();
  const rt::TensorView views[2] = {vx, vo};
  const ops::ParamValue params[1] = {2.0};
  const ops::Call call = def.bind(views, params);
  const ops::LoadedKernel &k =
      ops::load_kernel(def.key(call), [&] { return def.kernel(call); });
  rt::ArgPack args;
  ops::push_tensor(args, vx);
  ops::push_tensor(args, vo);
  args.push(2.0f);
  CUlaunchConfig config{};
  config.gridDimX = config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = static_cast<unsigned>(k.abi.threads);
  config.blockDimY = config.blockDimZ = 1;
  const rt::Driver &cu = rt::driver();

  const int batch = 100, batches = 50;
  auto time_per_call = [&](auto &&call) {
    std::vector<double> us;
    for (int b = 0; b < batches; ++b) {
      auto start = Clock::now();
      for (int i = 0; i < batch; ++i)
        call();
      us.push_back(ms_since(start) * 1000 / batch);
      rt::synchronize(nullptr);
    }
    return median(us);
  };
  double raw = time_per_call(
      [&] { cu.cuLaunchKernelEx(&config, k.function, args.data(), nullptr); });
  double op = time_per_call([&] { elementwise::scale_copy(vx, vo, 2.0f); });
  fmt::print("\nsteady-state host cost per call (median of {} batches of {}):\n"
             "  raw cuLaunchKernelEx, same cubin   {:7.3f} us\n"
             "  scale_copy (checks, lookup, pack, launch) {:7.3f} us   "
             "ratio {:.2f}x\n",
             batches, batch, raw, op, op / raw);
}
