// topk_gate_run.cpp - Runs topk_gate on the GPU with seeded N(0, 1) scores
// and checks it bitwise against the CPU reference; shared by the CLI, the
// GPU tests and the benchmark.
#include "moe/reference.h"
#include "moe/topk_gate.h"
#include "registry.h"

#include "common/rotation.h"

#include "tilejit/error.h"
#include "tilejit/runtime/buffer.h"
#include "tilejit/runtime/stream.h"
#include "tilejit/runtime/timer.h"

#include <fmt/format.h>

#include <random>

namespace tilejit::ops {

namespace {

struct TopkGateArgs {
  int64_t t, e, k;
};

TopkGateArgs parse(const OpArgs &args) {
  if (args.dtype && *args.dtype != DType::f32)
    throw UserError(fmt::format("topk_gate: --dtype {} is not supported; "
                                "requires f32",
                                name_of(*args.dtype)));
  std::vector<int64_t> shape =
      args.shape.empty() ? std::vector<int64_t>{8001, 256} : args.shape;
  if (shape.size() != 2)
    throw UserError(fmt::format("topk_gate: --shape has {} dimensions; "
                                "requires 2 (TxE)",
                                shape.size()));
  TopkGateArgs a{shape[0], shape[1], 0};
  a.k = static_cast<int64_t>(args.number("topk_gate", "num_topk", 8));
  moe::topk_gate_spec(a.e, a.k); // validates
  return a;
}

} // namespace

Kernel build_topk_gate(const OpArgs &args) {
  TopkGateArgs a = parse(args);
  return moe::topk_gate_kernel(moe::topk_gate_spec(a.e, a.k));
}

rt::SpecKey key_topk_gate(const OpArgs &args) {
  TopkGateArgs a = parse(args);
  return moe::topk_gate_key(moe::topk_gate_spec(a.e, a.k));
}

RunResult run_topk_gate(const OpArgs &args, const RunOptions &options) {
  TopkGateArgs a = parse(args);
  ref::HostTensor scores = ref::HostTensor::zeros(DType::f32, {a.t, a.e});
  std::mt19937_64 gen(options.seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int64_t i = 0; i < a.t * a.e; ++i)
    scores.data<float>()[i] = normal(gen);
  ref::HostTensor expected = moe::topk_gate_ref(scores, a.k);

  size_t in_bytes = static_cast<size_t>(a.t * a.e) * 4;
  size_t out_bytes = static_cast<size_t>(a.t * a.k) * 8;
  rt::DeviceBuffer ds(std::max<size_t>(in_bytes, 1)),
      dout(std::max<size_t>(out_bytes, 1));
  if (in_bytes)
    ds.upload(scores.raw(), in_bytes);
  dout.fill_zero();
  const int64_t in_shape[2] = {a.t, a.e}, out_shape[2] = {a.t, a.k};
  auto vs = rt::TensorView::contiguous(ds.ptr(), DType::f32, in_shape);
  auto vout = rt::TensorView::contiguous(dout.ptr(), DType::i64, out_shape);
  moe::topk_gate(vs, a.k, vout);
  rt::synchronize(nullptr);
  ref::HostTensor got = ref::HostTensor::zeros(DType::i64, out_shape);
  if (out_bytes)
    dout.download(got.raw(), out_bytes);

  RunResult r;
  r.shape = fmt::format("{}x{} top {}", a.t, a.e, a.k);
  r.bytes = static_cast<double>(in_bytes + out_bytes);
  std::string diff = ref::compare_exact(got, expected);
  r.passed = diff.empty();
  r.check = r.passed
                ? fmt::format("bitwise equal to CPU reference ({} rows)", a.t)
                : diff;
  if (options.iters > 0 && a.t > 0) {
    const Rotation rotation({&ds, &dout}, r.bytes);
    r.ms = rt::time_graph_ms(
        [&](CUstream s, int call) {
          moe::topk_gate(rotation.at(vs, call), a.k, rotation.at(vout, call),
                         s);
        },
        options.warmup, options.iters);
    r.copy_ms = copy_roofline_ms(r.bytes, options);
  }
  return r;
}

} // namespace tilejit::ops
