// sinkhorn_normalize_run.cpp - Runs sinkhorn_normalize on the GPU with
// seeded N(0, 1) inputs and checks it against the CPU reference with the
// spec's tolerance (torch.testing.assert_close fp32 defaults); shared by the
// CLI, the GPU tests and the benchmark.
#include "mhc/reference.h"
#include "mhc/sinkhorn_normalize.h"
#include "registry.h"

#include "common/rotation.h"

#include "tilejit/error.h"
#include "tilejit/runtime/buffer.h"
#include "tilejit/runtime/stream.h"
#include "tilejit/runtime/timer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <random>

namespace tilejit::ops {

namespace {

struct SinkhornArgs {
  std::vector<int64_t> shape;
  int repeat;
  float eps;
};

SinkhornArgs parse(const OpArgs &args) {
  if (args.dtype && *args.dtype != DType::f32)
    throw UserError(fmt::format("sinkhorn_normalize: --dtype {} is not "
                                "supported; requires f32",
                                name_of(*args.dtype)));
  SinkhornArgs a;
  a.shape =
      args.shape.empty() ? std::vector<int64_t>{2, 4096, 4, 4} : args.shape;
  if (a.shape.size() < 2 || a.shape.back() != a.shape[a.shape.size() - 2])
    throw UserError("sinkhorn_normalize: --shape must end in n x n");
  a.repeat = static_cast<int>(args.number("sinkhorn_normalize", "repeat", 10));
  a.eps = static_cast<float>(args.number("sinkhorn_normalize", "eps", 1e-6));
  mhc::sinkhorn_normalize_spec(a.shape.back(), a.repeat, a.eps); // validates
  return a;
}

/// torch.testing.assert_close: |a - e| <= atol + rtol |e|, fp32 defaults.
std::string assert_close(const ref::HostTensor &got,
                         const ref::HostTensor &expected) {
  const float *g = got.data<float>(), *e = expected.data<float>();
  for (int64_t i = 0; i < got.numel(); ++i)
    if (!(std::fabs(g[i] - e[i]) <= 1e-5 + 1.3e-6 * std::fabs(e[i])))
      return fmt::format("element {}: {} vs reference {} (beyond rtol "
                         "1.3e-6, atol 1e-5)",
                         i, g[i], e[i]);
  return "";
}

} // namespace

Kernel build_sinkhorn_normalize(const OpArgs &args) {
  SinkhornArgs a = parse(args);
  return mhc::sinkhorn_normalize_kernel(
      mhc::sinkhorn_normalize_spec(a.shape.back(), a.repeat, a.eps));
}

rt::SpecKey key_sinkhorn_normalize(const OpArgs &args) {
  SinkhornArgs a = parse(args);
  return mhc::sinkhorn_normalize_key(
      mhc::sinkhorn_normalize_spec(a.shape.back(), a.repeat, a.eps));
}

RunResult run_sinkhorn_normalize(const OpArgs &args,
                                 const RunOptions &options) {
  SinkhornArgs a = parse(args);
  ref::HostTensor x = ref::HostTensor::zeros(DType::f32, a.shape);
  std::mt19937_64 gen(options.seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int64_t i = 0; i < x.numel(); ++i)
    x.data<float>()[i] = normal(gen);
  ref::HostTensor expected = mhc::sinkhorn_normalize_ref(x, a.repeat, a.eps);

  size_t bytes = static_cast<size_t>(x.numel()) * 4;
  rt::DeviceBuffer dx(std::max<size_t>(bytes, 1)),
      dout(std::max<size_t>(bytes, 1));
  if (bytes)
    dx.upload(x.raw(), bytes);
  dout.fill_zero();
  auto vx = rt::TensorView::contiguous(dx.ptr(), DType::f32, a.shape);
  auto vout = rt::TensorView::contiguous(dout.ptr(), DType::f32, a.shape);
  mhc::sinkhorn_normalize(vx, vout, a.repeat, a.eps);
  rt::synchronize(nullptr);
  ref::HostTensor got = ref::HostTensor::zeros(DType::f32, a.shape);
  if (bytes)
    dout.download(got.raw(), bytes);

  RunResult r;
  r.shape = fmt::format("{} repeat {}", fmt::join(a.shape, "x"), a.repeat);
  r.bytes = 2.0 * static_cast<double>(bytes);
  std::string diff = assert_close(got, expected);
  r.passed = diff.empty();
  r.check = r.passed ? fmt::format("within rtol 1.3e-6, atol 1e-5 of the CPU "
                                   "reference ({} elements)",
                                   x.numel())
                     : diff;
  if (options.iters > 0 && x.numel() > 0) {
    const Rotation rotation({&dx, &dout}, r.bytes);
    r.ms = rt::time_graph_ms(
        [&](CUstream s, int call) {
          mhc::sinkhorn_normalize(rotation.at(vx, call),
                                  rotation.at(vout, call), a.repeat, a.eps, s);
        },
        options.warmup, options.iters);
    r.copy_ms = copy_roofline_ms(r.bytes, options);
  }
  return r;
}

} // namespace tilejit::ops
