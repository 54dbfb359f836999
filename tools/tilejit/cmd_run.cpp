// cmd_run.cpp - `tilejit run` and `tilejit bench`: run an op on the GPU with
// seeded inputs, check it against the CPU reference, and (bench) time it
// against a device-to-device copy of the same bytes in the same process.
#include "commands.h"
#include "options.h"

#include "tilejit/error.h"
#include "tilejit/runtime/device.h"
#include "tilejit/runtime/driver.h"

#include <fmt/format.h>

namespace tilejit::cli {

static int run_op(std::string_view command, Args args, bool timed) {
  std::vector<std::string_view> allowed = {"--shape", "--dtype", "--set",
                                           "--seed"};
  if (timed)
    allowed.push_back("--iters");
  // Every argument is checked before the driver is.
  OpCommand cmd = parse_op_command(command, args, allowed);
  if (!rt::try_driver())
    throw NoGpuError(fmt::format("tilejit {}: no CUDA driver: {}", command,
                                 rt::no_driver_reason()));
  if (rt::device_count() == 0)
    throw NoGpuError(fmt::format("tilejit {}: no CUDA device", command));

  harness::RunOptions options;
  options.iters = timed ? cmd.iters : 0;
  options.seed = cmd.seed;
  if (timed)
    harness::settle_timing();
  harness::RunResult r =
      harness::Prepared::make(cmd.resolved, options.seed).run(options);
  const rt::Device &device = rt::Device::get();
  fmt::print("{} {} on {}: {}\n", cmd.op->name, r.shape, device.name(),
             r.check);
  if (timed && r.ms > 0) {
    if (r.flops > 0) {
      fmt::print("{:<12} {:>24} {:>10} {:>10}\n", "op", "shape", "ms",
                 "TFLOP/s");
      fmt::print("{:<12} {:>24} {:>10.4f} {:>10.1f}\n", cmd.op->name, r.shape,
                 r.ms, r.flops / (r.ms * 1e9));
    } else {
      double gbps = r.bytes / (r.ms * 1e6);
      double copy_gbps = r.copy_ms > 0 ? r.bytes / (r.copy_ms * 1e6) : 0;
      fmt::print("{:<12} {:>24} {:>10} {:>12} {:>14} {:>9}\n", "op", "shape",
                 "ms", "GB/s", "copy GB/s", "of copy");
      fmt::print("{:<12} {:>24} {:>10.4f} {:>12.1f} {:>14.1f} {:>8.1f}%\n",
                 cmd.op->name, r.shape, r.ms, gbps, copy_gbps,
                 copy_gbps > 0 ? 100.0 * gbps / copy_gbps : 0.0);
    }
  }
  return r.passed ? kOk : kInternalError;
}

int cmd_run(Args args) { return run_op("run", args, false); }
int cmd_bench(Args args) { return run_op("bench", args, true); }

} // namespace tilejit::cli
