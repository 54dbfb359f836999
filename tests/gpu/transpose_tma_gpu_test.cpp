// transpose_tma_gpu_test.cpp - batched_transpose's kernel with its tiles
// through a TMA pipeline (BatchedTransposeSpec::tma_stages): 1-, 2- and
// 4-byte elements (the 4-byte stages beyond 48 KB of shared memory), 2 to 4
// stages, 1 to 8 tiles a block, tiles of 64 x 64, 64 x 128 and 128 x 64,
// against the CPU reference bit for bit.
#include "device_tensors.h"

#include "common/jit.h"
#include "op/typed_op.h"
#include "transpose/batched_transpose.h"
#include "transpose/reference.h"

#include "tilejit/runtime/stream.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <string>

using namespace tilejit;

namespace {

void run(DType dtype, int stages, int tiles, int threads,
         std::initializer_list<int64_t> shape, int block_x = 64,
         int block_y = 64) {
  const transpose::BatchedTransposeSpec spec =
      transpose::batched_transpose_tma_spec(dtype, stages, tiles, threads,
                                            block_x, block_y);
  const ops::LoadedKernel &kernel =
      ops::load_kernel(ops::spec_key("test_transpose_tma", spec), [&] {
        return transpose::batched_transpose_kernel(spec);
      });
  REQUIRE(kernel.abi.args.back().kind == AbiArg::Kind::tensor_map);
  ref::HostTensor x = ref::HostTensor::zeros(dtype, shape);
  std::mt19937_64 gen(Catch::rngSeed() + stages * 10 + tiles);
  auto *bytes = reinterpret_cast<uint8_t *>(x.raw());
  for (int64_t i = 0; i < x.numel() * static_cast<int64_t>(size_of(dtype)); ++i)
    bytes[i] = static_cast<uint8_t>(gen());
  const ref::HostTensor want = transpose::batched_transpose_ref(x);
  // Poisoned output: every element must be written.
  ref::HostTensor poison = ref::HostTensor::zeros(dtype, want.shape());
  std::memset(poison.raw(), 0x5a, poison.numel() * size_of(dtype));
  gpu_test::Device device;
  ops::KernelArgs args;
  args.tensor("x", device.put(x));
  const rt::TensorView out = device.put(poison);
  args.tensor("out", out);
  ops::launch_kernel(kernel, args, "test_transpose_tma", nullptr);
  rt::synchronize(nullptr);
  const ref::HostTensor got = device.get(out, want);
  INFO(name_of(dtype) << ", " << block_x << " x " << block_y << " tiles, "
                      << stages << " stages, " << tiles << " tiles a block, "
                      << threads << " threads");
  CHECK(std::memcmp(got.raw(), want.raw(), want.numel() * size_of(dtype)) == 0);
}

} // namespace

TEST_CASE("batched_transpose's tiles through a TMA pipeline",
          "[transpose][tma]") {
  for (DType dtype : {DType::e4m3, DType::bf16, DType::f32})
    for (int stages : {2, 3, 4}) {
      run(dtype, stages, 1, 128, {2, 128, 192});
      run(dtype, stages, 4, 128, {3, 192, 512});
      run(dtype, stages, 8, 256, {1, 64, 1024});
    }
  // Tiles of 64 x 128 and 128 x 64.
  for (DType dtype : {DType::e4m3, DType::bf16}) {
    run(dtype, 3, 2, 256, {2, 128, 512}, 64, 128);
    run(dtype, 4, 4, 256, {2, 256, 256}, 128, 64);
  }
}
