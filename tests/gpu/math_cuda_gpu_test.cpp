// math_cuda_gpu_test.cpp - k.exp, k.log and k.log1p against CUDA's own expf,
// logf and log1pf (the PTX nvcc emits for them, cuda_math_ptx.h) on every
// one of the 2^32 f32 bit patterns: the quantisation ops compare with
// TileKernels exactly, and TileKernels and torch compute with CUDA's. And
// the CPU references' ref::cuda_log1pf against k.log1p.
#include "cuda_math_ptx.h"
#include "dsl_gpu.h"

#include "common/cuda_math.h"

#include "common/abi.h"
#include "common/jit.h"

#include "tilejit/compiler/dsl.h"
#include "tilejit/runtime/buffer.h"
#include "tilejit/runtime/launch.h"
#include "tilejit/runtime/module.h"
#include "tilejit/runtime/stream.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

using namespace tilejit;
using namespace tilejit::dsl_gpu;

namespace {

/// exp, log and log1p of x into three outputs.
Kernel exp_log_kernel() {
  dsl::KernelBuilder k("math_exp_log", 256);
  auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
  auto o1 = k.tensor("exp", DType::f32, 2, dsl::inner_contiguous(16));
  auto o2 = k.tensor("log", DType::f32, 2, dsl::inner_contiguous(16));
  auto o3 = k.tensor("log1p", DType::f32, 2, dsl::inner_contiguous(16));
  auto row = k.block_id(0) * k.index(kRows);
  auto t = k.load(x, {row, k.index(0)}, {kRows, kCols});
  k.store(k.exp(t), o1, {row, k.index(0)});
  k.store(k.log(t), o2, {row, k.index(0)});
  k.store(k.log1p(t), o3, {row, k.index(0)});
  return k.build();
}

/// A launch of `f` over n elements, 256 threads a block.
template <class Fn> void launch_flat(CUfunction f, uint32_t n, Fn &&push) {
  rt::ArgPack args;
  push(args);
  rt::LaunchConfig config;
  config.grid = {(n + 255) / 256, 1, 1};
  config.block = {256, 1, 1};
  rt::launch(f, config, args.data());
}

float from_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

} // namespace

TEST_CASE("exp, log and log1p equal CUDA's expf, logf and log1pf on every "
          "f32",
          "[dsl][math][exhaustive]") {
  const ops::LoadedKernel &ours =
      ops::load_kernel(ops::make_key("test_math_exp_log"), exp_log_kernel);
  rt::Module cuda =
      rt::Module::load(rt::link_ptx(kCudaMathPtx, "cuda_math.ptx").cubin);
  CUfunction fill = cuda.function("fill_bits");
  const char *names[3] = {"expf", "logf", "log1pf"};
  CUfunction check[3] = {cuda.function("check_expf"),
                         cuda.function("check_logf"),
                         cuda.function("check_log1pf")};

  constexpr uint32_t kChunk = 1u << 26; // 2^32 in 64 chunks
  const int64_t rows = kChunk / kCols;
  const size_t bytes = kChunk * size_t{4};
  rt::DeviceBuffer dx(bytes);
  rt::DeviceBuffer dout[3] = {rt::DeviceBuffer(bytes), rt::DeviceBuffer(bytes),
                              rt::DeviceBuffer(bytes)};
  // Per function: mismatches, and the smallest mismatching bit pattern.
  uint64_t host[3][2];
  rt::DeviceBuffer dcount(sizeof host);
  for (auto &h : host)
    h[0] = 0, h[1] = UINT64_MAX;
  dcount.upload(host, sizeof host);

  const int64_t shape[2] = {rows, kCols};
  for (uint64_t base = 0; base < (1ull << 32); base += kChunk) {
    launch_flat(fill, kChunk, [&](rt::ArgPack &args) {
      args.push(dx.ptr());
      args.push(static_cast<uint32_t>(base));
      args.push(kChunk);
    });
    launch_rows(ours, rows, [&](rt::ArgPack &args) {
      ops::push_tensor(args,
                       rt::TensorView::contiguous(dx.ptr(), DType::f32, shape));
      for (rt::DeviceBuffer &o : dout)
        ops::push_tensor(
            args, rt::TensorView::contiguous(o.ptr(), DType::f32, shape));
    });
    for (int f = 0; f < 3; ++f)
      launch_flat(check[f], kChunk, [&](rt::ArgPack &args) {
        args.push(dx.ptr());
        args.push(dout[f].ptr());
        args.push(kChunk);
        args.push(dcount.ptr() + 16 * f);
      });
  }
  rt::synchronize(nullptr);
  dcount.download(host, sizeof host);
  for (int f = 0; f < 3; ++f) {
    CAPTURE(names[f]);
    INFO("first mismatching input: 0x"
         << std::hex << host[f][1] << std::dec << " ("
         << (host[f][0] ? from_bits(static_cast<uint32_t>(host[f][1])) : 0.0f)
         << ")");
    CHECK(host[f][0] == 0);
  }
}

TEST_CASE("the references' cuda_log1pf equals k.log1p", "[dsl][math]") {
  const ops::LoadedKernel &ours =
      ops::load_kernel(ops::make_key("test_math_exp_log"), exp_log_kernel);
  // Every 61st bit pattern (70 million, every exponent and sign), in
  // batches of 2^22.
  constexpr uint32_t kBatch = 1u << 22, kStride = 61;
  const int64_t rows = kBatch / kCols, shape[2] = {rows, kCols};
  rt::DeviceBuffer dx(kBatch * 4), dexp(kBatch * 4), dlog(kBatch * 4),
      dlog1p(kBatch * 4);
  std::vector<float> x(kBatch), got(kBatch);
  uint64_t mismatches = 0, checked = 0, first = 0;
  for (uint64_t base = 0; base < (1ull << 32);
       base += uint64_t{kBatch} * kStride) {
    for (uint32_t i = 0; i < kBatch; ++i)
      x[i] = from_bits(static_cast<uint32_t>(base + uint64_t{i} * kStride));
    dx.upload(x.data(), kBatch * 4);
    launch_rows(ours, rows, [&](rt::ArgPack &args) {
      for (rt::DeviceBuffer *b : {&dx, &dexp, &dlog, &dlog1p})
        ops::push_tensor(
            args, rt::TensorView::contiguous(b->ptr(), DType::f32, shape));
    });
    dlog1p.download(got.data(), kBatch * 4);
    for (uint32_t i = 0; i < kBatch; ++i) {
      if (base + uint64_t{i} * kStride >= (1ull << 32))
        break;
      const float want = ref::cuda_log1pf(x[i]);
      uint32_t a, b;
      std::memcpy(&a, &want, 4);
      std::memcpy(&b, &got[i], 4);
      // NaNs agree as NaNs (their payloads are the hardware's).
      if (a != b && !(std::isnan(want) && std::isnan(got[i])) &&
          mismatches++ == 0)
        std::memcpy(&first, &x[i], 4);
      ++checked;
    }
  }
  INFO("first mismatching input: 0x" << std::hex << first);
  CHECK(checked > 70000000);
  CHECK(mismatches == 0);
}
