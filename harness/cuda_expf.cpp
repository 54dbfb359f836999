// cuda_expf.cpp - A one-tensor DSL kernel, out = exp(x) over 1024 elements
// a block, compiled and cached as the ops' kernels are.
#include "cuda_expf.h"

#include "common/jit.h"
#include "op/typed_op.h"

#include "tilejit/compiler/dsl.h"
#include "tilejit/runtime/buffer.h"
#include "tilejit/runtime/stream.h"

namespace tilejit::harness {

namespace {

constexpr int64_t kBlock = 1024;

Kernel expf_kernel() {
  dsl::KernelBuilder k("harness_expf", 128);
  auto x = k.tensor("x", DType::f32, 1);
  auto out = k.tensor("out", DType::f32, 1);
  k.grid({k.blocks(x, 0, kBlock)});
  auto origin = k.block_id(0) * k.index(kBlock);
  k.store(k.exp(k.load(x, {origin}, {kBlock})), out, {origin});
  return k.build();
}

} // namespace

std::vector<float> cuda_expf_values(std::span<const float> args) {
  std::vector<float> values(args.size());
  if (args.empty())
    return values;
  const ops::LoadedKernel &kernel =
      ops::load_kernel(ops::make_key("harness_expf"), expf_kernel);
  const size_t bytes = args.size() * sizeof(float);
  rt::DeviceBuffer in(bytes), out(bytes);
  in.upload(args.data(), bytes);
  const int64_t n[1] = {static_cast<int64_t>(args.size())};
  ops::KernelArgs bound;
  const rt::TensorView x = rt::TensorView::contiguous(in.ptr(), DType::f32, n);
  const rt::TensorView y = rt::TensorView::contiguous(out.ptr(), DType::f32, n);
  bound.tensor("x", x);
  bound.tensor("out", y);
  ops::launch_kernel(kernel, bound, "harness_expf", nullptr);
  rt::synchronize(nullptr);
  out.download(values.data(), bytes);
  return values;
}

} // namespace tilejit::harness
