// transpose_test.cpp - Tests of the transpose and batched_transpose
// references (shared/specs/quant_transpose.md §14): exact data movement for
// 1-, 2- and 4-byte dtypes, strided rows, empty and size-1 dims, and every
// argument check.
#include "transpose/reference.h"

#include "tilejit/error.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <vector>

using namespace tilejit;
using tilejit::ref::HostTensor;
using tilejit::transpose::batched_transpose_ref;
using tilejit::transpose::transpose_ref;

namespace {

/// Fills every element of t (any strides) with seeded random bytes, so NaN
/// and subnormal bit patterns of the float dtypes appear too.
void fill_random(HostTensor &t, uint32_t seed) {
  std::mt19937 rng(seed);
  const std::size_t bytes = size_of(t.dtype());
  std::vector<int64_t> index(t.rank(), 0);
  for (int64_t n = 0; n < t.numel(); ++n) {
    int64_t rest = n;
    for (int d = t.rank(); d-- > 0;) {
      index[d] = rest % t.size(d);
      rest /= t.size(d);
    }
    uint32_t v = rng();
    std::memcpy(t.raw() + t.offset(index) * bytes, &v, bytes);
  }
}

HostTensor strided(DType dtype, std::vector<int64_t> shape,
                   std::vector<int64_t> strides) {
  return HostTensor::zeros_strided(dtype, shape, strides);
}

} // namespace

TEST_CASE("transpose moves every element to out[y, x] = in[x, y]",
          "[ref][transpose]") {
  // i32 arange: element (x, y) holds x * 1000 + y, so the expected value of
  // out[y, x] is known without any transpose code.
  const int64_t rows = 64, cols = 128;
  HostTensor x = HostTensor::zeros(DType::i32, {rows, cols});
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      x.at<int32_t>({i, j}) = static_cast<int32_t>(i * 1000 + j);
  HostTensor out = transpose_ref(x);
  REQUIRE(out.dtype() == DType::i32);
  REQUIRE(out.shape() == std::vector<int64_t>{cols, rows});
  REQUIRE(out.strides() == std::vector<int64_t>{rows, 1});
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < rows; ++i)
      REQUIRE(out.at<int32_t>({j, i}) == i * 1000 + j);
}

TEST_CASE("transpose is bit-exact for 1-, 2- and 4-byte dtypes",
          "[ref][transpose]") {
  for (DType dtype :
       {DType::e4m3, DType::e5m2, DType::u8, DType::i8, DType::boolean,
        DType::bf16, DType::f16, DType::f32, DType::i32, DType::u32}) {
    INFO(name_of(dtype));
    HostTensor x = HostTensor::zeros(dtype, {128, 192});
    fill_random(x, 7);
    HostTensor expected = x.transposed(0, 1).clone();
    CHECK(compare_exact(transpose_ref(x), expected) == "");
  }
}

TEST_CASE("transpose reads rows strided by a multiple of 4 (the tests' "
          "twice_stride)",
          "[ref][transpose]") {
  for (DType dtype : {DType::e4m3, DType::bf16, DType::f32}) {
    // Row stride 2K, as tests/transpose/test_transpose.py lays x out.
    HostTensor x = strided(dtype, {192, 64}, {128, 1});
    fill_random(x, 11);
    HostTensor out = transpose_ref(x);
    CHECK(compare_exact(out, x.transposed(0, 1).clone()) == "");
    // Row stride K + 4: the smallest legal padding.
    HostTensor y = strided(dtype, {64, 128}, {132, 1});
    fill_random(y, 12);
    CHECK(compare_exact(transpose_ref(y), y.transposed(0, 1).clone()) == "");
  }
}

TEST_CASE("batched_transpose transposes each batch", "[ref][transpose]") {
  for (DType dtype : {DType::e4m3, DType::bf16, DType::f32}) {
    HostTensor x = HostTensor::zeros(dtype, {3, 128, 192});
    fill_random(x, 21);
    HostTensor out = batched_transpose_ref(x);
    REQUIRE(out.shape() == std::vector<int64_t>{3, 192, 128});
    CHECK(compare_exact(out, x.transposed(1, 2).clone()) == "");
  }
  // Strided rows with the batch stride X * row stride that the kernel
  // declares.
  HostTensor x = strided(DType::bf16, {2, 64, 64}, {64 * 68, 68, 1});
  fill_random(x, 22);
  CHECK(compare_exact(batched_transpose_ref(x), x.transposed(1, 2).clone()) ==
        "");
}

TEST_CASE("transpose twice is the identity", "[ref][transpose]") {
  for (DType dtype : {DType::e4m3, DType::bf16, DType::f32}) {
    HostTensor x = strided(dtype, {256, 128}, {256, 1});
    fill_random(x, 31);
    CHECK(compare_exact(transpose_ref(transpose_ref(x)), x.clone()) == "");
    HostTensor b = HostTensor::zeros(dtype, {4, 64, 192});
    fill_random(b, 32);
    CHECK(compare_exact(batched_transpose_ref(batched_transpose_ref(b)), b) ==
          "");
  }
}

TEST_CASE("transpose handles empty dims and a batch of one",
          "[ref][transpose]") {
  HostTensor no_rows = HostTensor::zeros(DType::bf16, {0, 128});
  HostTensor out = transpose_ref(no_rows);
  CHECK(out.shape() == std::vector<int64_t>{128, 0});
  CHECK(out.dtype() == DType::bf16);
  CHECK(transpose_ref(HostTensor::zeros(DType::f32, {64, 0})).shape() ==
        std::vector<int64_t>{0, 64});
  CHECK(batched_transpose_ref(HostTensor::zeros(DType::e4m3, {0, 64, 128}))
            .shape() == std::vector<int64_t>{0, 128, 64});
  CHECK(transpose_ref(HostTensor::zeros(DType::f32, {0, 0})).numel() == 0);
  // B = 1: the batch stride is never used, so any value is accepted (torch
  // gives a size-1 dim an arbitrary stride).
  HostTensor one = strided(DType::f32, {1, 64, 64}, {7, 64, 1});
  fill_random(one, 41);
  CHECK(compare_exact(batched_transpose_ref(one),
                      one.transposed(1, 2).clone()) == "");
}

TEST_CASE("transpose rejects what the original asserts", "[ref][transpose]") {
  // Wrong rank.
  CHECK_THROWS_WITH(
      transpose_ref(HostTensor::zeros(DType::f32, {2, 64, 64})),
      "transpose_ref: argument 'x' has shape [2, 64, 64]; requires a 2-D "
      "tensor");
  CHECK_THROWS_WITH(
      batched_transpose_ref(HostTensor::zeros(DType::f32, {64, 64})),
      "batched_transpose_ref: argument 'x' has shape [64, 64]; requires a 3-D "
      "tensor");
  // 8-byte elements.
  CHECK_THROWS_WITH(transpose_ref(HostTensor::zeros(DType::i64, {64, 64})),
                    "transpose_ref: argument 'x' has a dtype of 8 bytes per "
                    "element; requires a dtype of 1, 2 or 4 bytes");
  // A dim that is not a multiple of 64 (including size 1).
  CHECK_THROWS_WITH(transpose_ref(HostTensor::zeros(DType::bf16, {96, 64})),
                    "transpose_ref: argument 'x' has shape [96, 64]; requires "
                    "the last two dims to be multiples of 64");
  CHECK_THROWS_WITH(
      batched_transpose_ref(HostTensor::zeros(DType::bf16, {2, 64, 1})),
      "batched_transpose_ref: argument 'x' has shape [2, 64, 1]; requires the "
      "last two dims to be multiples of 64");
  // A non-unit last stride (a transposed view).
  HostTensor t = HostTensor::zeros(DType::f32, {64, 128}).transposed(0, 1);
  CHECK_THROWS_WITH(transpose_ref(t),
                    "transpose_ref: argument 'x' has stride[1] = 128; "
                    "requires a contiguous last dimension");
  // A row stride that is not a multiple of 4.
  CHECK_THROWS_WITH(transpose_ref(strided(DType::bf16, {64, 64}, {66, 1})),
                    "transpose_ref: argument 'x' has stride[0] = 66; requires "
                    "a row stride that is a multiple of 4");
  // A batch stride other than X * row stride.
  CHECK_THROWS_WITH(
      batched_transpose_ref(strided(DType::f32, {2, 64, 64}, {8192, 64, 1})),
      "batched_transpose_ref: argument 'x' has stride[0] = 8192; requires "
      "stride[0] == size[1] * stride[1] = 4096");
}
