// batched_transpose_test.cpp - The argument checks of batched_transpose,
// which reject before anything runs or is written (no GPU needed).
#include "transpose/batched_transpose.h"

#include "tilejit/error.h"

#include <catch2/catch.hpp>

using namespace tilejit;
using rt::TensorView;

namespace {
std::string user_error(const TensorView &x, const TensorView &out) {
  try {
    transpose::batched_transpose(x, out);
  } catch (const UserError &e) {
    return e.what();
  }
  return "";
}
} // namespace

TEST_CASE("batched_transpose rejects bad arguments", "[kernels][error]") {
  CUdeviceptr p = 0x100000;
  auto x = TensorView::contiguous(p, DType::bf16, {2, 128, 64});
  auto out = TensorView::contiguous(p + (1 << 20), DType::bf16, {2, 64, 128});
  // Deliberate mistake: 8-byte elements.
  CHECK(user_error(TensorView::contiguous(p, DType::i64, {2, 128, 64}), out) ==
        "batched_transpose: argument 'x' has dtype i64; requires a dtype of 1, "
        "2 or 4 bytes");
  // Deliberate mistake: a dim that is not a multiple of 64.
  CHECK(user_error(TensorView::contiguous(p, DType::bf16, {2, 100, 64}), out) ==
        "batched_transpose: argument 'x' has shape [2, 100, 64]; requires dims "
        "1 and 2 to be multiples of 64");
  // Deliberate mistake: a row stride that is not a multiple of 4.
  const int64_t shape[3] = {1, 128, 64}, strides[3] = {128 * 66, 66, 1};
  CHECK(user_error(TensorView::strided(p, DType::bf16, shape, strides),
                   TensorView::contiguous(p, DType::bf16, {1, 64, 128})) ==
        "batched_transpose: argument 'x' has strides [8448, 66, 1]; requires "
        "stride[2] = 1 and stride[1] a multiple of 4");
  // Deliberate mistake: a batch stride other than X * row stride.
  const int64_t bshape[3] = {2, 128, 64}, bstrides[3] = {128 * 64 + 4, 64, 1};
  CHECK(user_error(TensorView::strided(p, DType::bf16, bshape, bstrides),
                   out) == "batched_transpose: argument 'x' has stride[0] = "
                           "8196; requires shape[1] * stride[1] = 8192");
  // Deliberate mistake: out not transposed.
  CHECK(user_error(x, TensorView::contiguous(p, DType::bf16, {2, 128, 64})) ==
        "batched_transpose: argument 'out' is bf16[2, 128, 64] strides [8192, "
        "64, 1]; requires a contiguous [2, 64, 128]");
  // Deliberate mistake: dtypes differ.
  CHECK(user_error(x, TensorView::contiguous(p, DType::f32, {2, 64, 128})) ==
        "batched_transpose: argument 'out' has dtype f32; requires bf16");
  // Size 0 needs neither pointers nor a GPU.
  CHECK(user_error(TensorView::contiguous(0, DType::bf16, {0, 128, 64}),
                   TensorView::contiguous(0, DType::bf16, {0, 64, 128})) == "");
}
