// scale_copy_run.cpp - Runs scale_copy on the GPU with seeded inputs and
// checks it against the CPU reference; shared by `tilejit run/bench`, the
// GPU tests and the benchmark.
#include "elementwise/scale_copy.h"
#include "registry.h"

#include "common/rotation.h"

#include "tilejit/error.h"
#include "tilejit/runtime/buffer.h"
#include "tilejit/runtime/stream.h"
#include "tilejit/runtime/timer.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <random>

namespace tilejit::ops {

static void check_args(const OpArgs &args, int64_t &rows, int64_t &cols) {
  if (args.dtype && *args.dtype != DType::f32)
    throw UserError(fmt::format("scale_copy: --dtype {} is not supported; "
                                "requires f32",
                                name_of(*args.dtype)));
  std::vector<int64_t> shape =
      args.shape.empty() ? std::vector<int64_t>{8192, 8192} : args.shape;
  if (shape.size() != 2)
    throw UserError(fmt::format("scale_copy: --shape has {} dimensions; "
                                "requires 2 (ROWSxCOLS)",
                                shape.size()));
  rows = shape[0];
  cols = shape[1];
}

/// The specialisation a call on contiguous tensors of the given shape gets:
/// rows of a multiple of 16 bytes are aligned (allocators give 256 bytes).
static elementwise::ScaleCopySpec spec_for(const OpArgs &args) {
  int64_t rows, cols;
  check_args(args, rows, cols);
  elementwise::ScaleCopySpec spec;
  spec.vector_bytes = (cols * 4) % 16 == 0 ? 16 : 0;
  return spec;
}

Kernel build_scale_copy(const OpArgs &args) {
  return elementwise::scale_copy_kernel(spec_for(args));
}

rt::SpecKey key_scale_copy(const OpArgs &args) {
  return elementwise::scale_copy_key(spec_for(args));
}

RunResult run_scale_copy(const OpArgs &args, const RunOptions &options) {
  int64_t rows, cols;
  check_args(args, rows, cols);
  float scale = static_cast<float>(args.number("scale_copy", "scale", 1.5));
  std::size_t n = static_cast<std::size_t>(rows * cols);

  std::vector<float> x(n), out(n), ref(n);
  std::mt19937_64 gen(options.seed);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  for (float &v : x)
    v = dist(gen);

  rt::DeviceBuffer dx(n * sizeof(float)), dout(n * sizeof(float));
  dx.upload(x.data(), n * sizeof(float));
  dout.fill_zero();
  auto vx = rt::TensorView::contiguous(dx.ptr(), DType::f32, {rows, cols});
  auto vout = rt::TensorView::contiguous(dout.ptr(), DType::f32, {rows, cols});
  elementwise::scale_copy(vx, vout, scale);
  rt::synchronize(nullptr);
  dout.download(out.data(), n * sizeof(float));

  const int64_t strides[2] = {cols, 1};
  elementwise::scale_copy_ref(x.data(), strides, ref.data(), strides, rows,
                              cols, scale);
  std::size_t mismatches = 0, first = n;
  for (std::size_t i = 0; i < n; ++i)
    if (std::memcmp(&out[i], &ref[i], sizeof(float)) != 0 &&
        !(std::isnan(out[i]) && std::isnan(ref[i])) && mismatches++ == 0)
      first = i;

  RunResult r;
  r.shape = fmt::format("{}x{}", rows, cols);
  r.bytes = 2.0 * n * sizeof(float);
  r.passed = mismatches == 0;
  r.check = r.passed ? fmt::format("bitwise equal to CPU reference, NaN "
                                   "payloads aside ({} elements)",
                                   n)
                     : fmt::format("{} of {} elements differ from the CPU "
                                   "reference; first at [{}, {}]: {} vs {}",
                                   mismatches, n, first / cols, first % cols,
                                   out[first], ref[first]);
  if (options.iters > 0 && n > 0) {
    const Rotation rotation({&dx, &dout}, r.bytes);
    r.ms = rt::time_graph_ms(
        [&](CUstream s, int call) {
          elementwise::scale_copy(rotation.at(vx, call),
                                  rotation.at(vout, call), scale, s);
        },
        options.warmup, options.iters);
    r.copy_ms = copy_roofline_ms(r.bytes, options);
  }
  return r;
}

} // namespace tilejit::ops
