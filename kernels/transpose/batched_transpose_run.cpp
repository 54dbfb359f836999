// batched_transpose_run.cpp - Runs batched_transpose on the GPU with seeded
// inputs and checks it bytewise against the CPU reference; shared by the
// CLI, the GPU tests and the benchmark.
#include "registry.h"
#include "transpose/batched_transpose.h"
#include "transpose/reference.h"

#include "common/rotation.h"

#include "tilejit/error.h"
#include "tilejit/runtime/buffer.h"
#include "tilejit/runtime/stream.h"
#include "tilejit/runtime/timer.h"

#include <fmt/format.h>

#include <cstring>
#include <random>

namespace tilejit::ops {

static void check_args(const OpArgs &args, std::vector<int64_t> &shape,
                       DType &dtype) {
  dtype = args.dtype.value_or(DType::bf16);
  shape = args.shape.empty() ? std::vector<int64_t>{8, 4032, 7168} : args.shape;
  if (shape.size() != 3)
    throw UserError(fmt::format("batched_transpose: --shape has {} dimensions; "
                                "requires 3 (BxXxY)",
                                shape.size()));
  size_t bytes = size_of(dtype);
  if (bytes != 1 && bytes != 2 && bytes != 4)
    throw UserError(
        fmt::format("batched_transpose: --dtype {} is not "
                    "supported; requires a dtype of 1, 2 or 4 bytes",
                    name_of(dtype)));
}

static transpose::BatchedTransposeSpec spec_for(const OpArgs &args) {
  std::vector<int64_t> shape;
  DType dtype;
  check_args(args, shape, dtype);
  int64_t elt = static_cast<int64_t>(size_of(dtype));
  return transpose::batched_transpose_spec(dtype, shape[2],
                                           (shape[2] * elt) % 16 == 0 &&
                                               (shape[1] * elt) % 16 == 0);
}

Kernel build_batched_transpose(const OpArgs &args) {
  return transpose::batched_transpose_kernel(spec_for(args));
}

rt::SpecKey key_batched_transpose(const OpArgs &args) {
  return transpose::batched_transpose_key(spec_for(args));
}

RunResult run_batched_transpose(const OpArgs &args, const RunOptions &options) {
  std::vector<int64_t> shape;
  DType dtype;
  check_args(args, shape, dtype);
  size_t elt = size_of(dtype);
  int64_t n = shape[0] * shape[1] * shape[2];
  size_t bytes = static_cast<size_t>(n) * elt;

  // Random bytes are valid data for the copy (NaN patterns included).
  ref::HostTensor x = ref::HostTensor::zeros(dtype, shape);
  std::mt19937_64 gen(options.seed);
  for (size_t i = 0; i < bytes; ++i)
    x.raw()[i] = static_cast<std::byte>(gen());

  rt::DeviceBuffer dx(bytes), dout(bytes);
  dx.upload(x.raw(), bytes);
  dout.fill_zero();
  auto vx = rt::TensorView::contiguous(dx.ptr(), dtype, shape);
  const int64_t out_shape[3] = {shape[0], shape[2], shape[1]};
  auto vout = rt::TensorView::contiguous(dout.ptr(), dtype, out_shape);
  transpose::batched_transpose(vx, vout);
  rt::synchronize(nullptr);

  ref::HostTensor expected = transpose::batched_transpose_ref(x);
  ref::HostTensor got = ref::HostTensor::zeros(dtype, out_shape);
  dout.download(got.raw(), bytes);

  RunResult r;
  r.shape =
      fmt::format("{}x{}x{} {}", shape[0], shape[1], shape[2], name_of(dtype));
  r.bytes = 2.0 * bytes;
  std::string diff = ref::compare_exact(got, expected);
  r.passed = diff.empty();
  r.check = r.passed
                ? fmt::format("bitwise equal to CPU reference ({} elements)", n)
                : diff;
  if (options.iters > 0 && n > 0) {
    const Rotation rotation({&dx, &dout}, r.bytes);
    r.ms = rt::time_graph_ms(
        [&](CUstream s, int call) {
          transpose::batched_transpose(rotation.at(vx, call),
                                       rotation.at(vout, call), s);
        },
        options.warmup, options.iters);
    r.copy_ms = copy_roofline_ms(r.bytes, options);
  }
  return r;
}

} // namespace tilejit::ops
