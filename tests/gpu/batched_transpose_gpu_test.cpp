// batched_transpose_gpu_test.cpp - batched_transpose and transpose on the GPU
// against the CPU reference, bytewise: every dtype size, TileKernels' test
// shapes (scaled down where the original's are large), strided rows, size 0,
// and the argument checks.
#include "registry.h"
#include "transpose/batched_transpose.h"
#include "transpose/reference.h"

#include "tilejit/error.h"
#include "tilejit/runtime/buffer.h"
#include "tilejit/runtime/stream.h"

#include <catch2/catch.hpp>

#include <random>
#include <vector>

using namespace tilejit;
using Catch::Matchers::Contains;

namespace {

/// Runs batched_transpose on random bytes of x (B, X, Y) whose rows are
/// `row_stride` apart; returns the reference comparison ("" when equal).
std::string check(DType dtype, int64_t b, int64_t x, int64_t y,
                  int64_t row_stride, uint64_t seed) {
  size_t elt = size_of(dtype);
  const int64_t shape[3] = {b, x, y};
  const int64_t strides[3] = {x * row_stride, row_stride, 1};
  // Whole rows of row_stride elements, so the padding is uploaded too.
  size_t in_bytes =
      static_cast<size_t>(std::max<int64_t>(b * x * row_stride, 1)) * elt;
  std::vector<std::byte> host(in_bytes);
  std::mt19937_64 gen(seed);
  for (std::byte &byte : host)
    byte = static_cast<std::byte>(gen());
  ref::HostTensor in =
      ref::HostTensor::view(host.data(), dtype, shape, strides);

  const int64_t out_shape[3] = {b, y, x};
  size_t out_bytes = static_cast<size_t>(std::max<int64_t>(b * x * y, 1)) * elt;
  rt::DeviceBuffer din(in_bytes), dout(out_bytes);
  din.upload(host.data(), in_bytes);
  dout.fill_zero();
  transpose::batched_transpose(
      rt::TensorView::strided(din.ptr(), dtype, shape, strides),
      rt::TensorView::contiguous(dout.ptr(), dtype, out_shape));
  rt::synchronize(nullptr);
  ref::HostTensor got = ref::HostTensor::zeros(dtype, out_shape);
  if (b * x * y > 0)
    dout.download(got.raw(), out_bytes);
  return ref::compare_exact(got, transpose::batched_transpose_ref(in));
}

} // namespace

TEST_CASE("batched_transpose is bit-exact for 1-, 2- and 4-byte dtypes",
          "[batched_transpose]") {
  uint64_t seed = std::random_device{}();
  for (DType dtype : {DType::e4m3, DType::bf16, DType::f32}) {
    INFO(name_of(dtype));
    CHECK(check(dtype, 2, 128, 192, 192, seed++) == "");
    CHECK(check(dtype, 8, 64, 64, 64, seed++) == "");
    CHECK(check(dtype, 1, 448, 576, 576, seed++) == "");
  }
}

TEST_CASE("batched_transpose follows a row stride of 2K, as the original's "
          "test does",
          "[batched_transpose]") {
  for (DType dtype : {DType::e4m3, DType::bf16}) {
    INFO(name_of(dtype));
    CHECK(check(dtype, 1, 4032, 576, 2 * 576, 3) == "");
    // A row stride that breaks 16-byte alignment takes the scalar kernel.
    CHECK(check(dtype, 1, 128, 128, 132, 4) == "");
  }
}

TEST_CASE("batched_transpose at TileKernels' shapes, and size 0",
          "[batched_transpose][big]") {
  const ops::OpInfo *op = ops::find_op("batched_transpose");
  REQUIRE(op);
  ops::OpArgs args;
  args.shape = {8, 4032, 7168};
  args.dtype = DType::bf16;
  ops::RunResult r = op->run(args, {});
  INFO(r.check);
  CHECK(r.passed);
  CHECK(check(DType::bf16, 0, 64, 64, 64, 5) == "");
  CHECK(check(DType::f32, 3, 0, 64, 64, 6) == "");
}

TEST_CASE("transpose (2-D) uses the batched kernel", "[batched_transpose]") {
  const int64_t x = 256, y = 128;
  std::vector<float> host(x * y);
  for (size_t i = 0; i < host.size(); ++i)
    host[i] = static_cast<float>(i);
  rt::DeviceBuffer din(host.size() * 4), dout(host.size() * 4);
  din.upload(host.data(), host.size() * 4);
  transpose::transpose(
      rt::TensorView::contiguous(din.ptr(), DType::f32, {x, y}),
      rt::TensorView::contiguous(dout.ptr(), DType::f32, {y, x}));
  rt::synchronize(nullptr);
  std::vector<float> out(host.size());
  dout.download(out.data(), out.size() * 4);
  size_t bad = 0;
  for (int64_t i = 0; i < x; ++i)
    for (int64_t j = 0; j < y; ++j)
      bad += out[j * x + i] != host[i * y + j];
  CHECK(bad == 0);
}
