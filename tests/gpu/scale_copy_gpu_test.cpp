// scale_copy_gpu_test.cpp - scale_copy on the GPU against the CPU reference:
// named inputs, IEEE edge values, a shape sweep with tails, size 1 and 0,
// strided views, and no write outside the output.
#include "elementwise/reference.h"
#include "elementwise/scale_copy.h"

#include "tilejit/runtime/buffer.h"
#include "tilejit/runtime/stream.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace tilejit;
using rt::DeviceBuffer;
using rt::TensorView;

namespace {

/// Runs scale_copy on rows x cols of `x` (row stride x_ld) into an output
/// with row stride out_ld, inside a buffer filled with a sentinel; returns
/// the number of elements that differ from the reference, counting any
/// sentinel overwritten outside the output.
size_t mismatches(const std::vector<float> &x, int64_t rows, int64_t cols,
                  int64_t x_ld, int64_t out_ld, float scale) {
  const float sentinel = -12345.0f;
  size_t out_elems = static_cast<size_t>(std::max<int64_t>(rows * out_ld, 1));
  std::vector<float> out(out_elems, sentinel), ref(out_elems, sentinel);

  DeviceBuffer dx(std::max<size_t>(x.size(), 1) * sizeof(float));
  DeviceBuffer dout(out_elems * sizeof(float));
  if (!x.empty())
    dx.upload(x.data(), x.size() * sizeof(float));
  dout.upload(out.data(), out_elems * sizeof(float));

  const int64_t shape[2] = {rows, cols};
  const int64_t xs[2] = {x_ld, 1}, os[2] = {out_ld, 1};
  elementwise::scale_copy(
      TensorView::strided(dx.ptr(), DType::f32, shape, xs),
      TensorView::strided(dout.ptr(), DType::f32, shape, os), scale);
  rt::synchronize(nullptr);
  dout.download(out.data(), out_elems * sizeof(float));
  elementwise::scale_copy_ref(x.data(), xs, ref.data(), os, rows, cols, scale);

  // Bit-exact, except that any NaN matches any NaN: the GPU returns the
  // canonical NaN where x86 keeps the input's payload or sets the sign.
  size_t bad = 0;
  for (size_t i = 0; i < out_elems; ++i)
    bad += std::memcmp(&out[i], &ref[i], sizeof(float)) != 0 &&
           !(std::isnan(out[i]) && std::isnan(ref[i]));
  return bad;
}

std::vector<float> seeded(size_t n, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<float> dist(-1000.0f, 1000.0f);
  std::vector<float> v(n);
  for (float &e : v)
    e = dist(gen);
  return v;
}

} // namespace

TEST_CASE("scale_copy matches the reference on named inputs", "[scale_copy]") {
  const int64_t rows = 100, cols = 300;
  size_t n = rows * cols;
  std::vector<float> zeros(n, 0.0f), ones(n, 1.0f), arange(n);
  for (size_t i = 0; i < n; ++i)
    arange[i] = static_cast<float>(i);
  CHECK(mismatches(zeros, rows, cols, cols, cols, 3.0f) == 0);
  CHECK(mismatches(ones, rows, cols, cols, cols, -0.5f) == 0);
  CHECK(mismatches(arange, rows, cols, cols, cols, 1.0f / 3.0f) == 0);
  CHECK(mismatches(seeded(n, std::random_device{}()), rows, cols, cols, cols,
                   1.7f) == 0);
}

TEST_CASE("scale_copy keeps IEEE edge values", "[scale_copy]") {
  const float inf = std::numeric_limits<float>::infinity();
  const float max = std::numeric_limits<float>::max();
  const float denorm = std::numeric_limits<float>::denorm_min();
  std::vector<float> x = {inf,     -inf, std::nanf(""), max,    -max,    denorm,
                          -denorm, 0.0f, -0.0f,         1e-38f, 3.0e38f, 1.0f};
  // Overflow to inf, subnormal results and signed zeros must all match.
  for (float scale : {2.0f, 0.5f, -1.0f, 0.0f, 1e-10f})
    CHECK(mismatches(x, 3, 4, 4, 4, scale) == 0);
}

TEST_CASE("scale_copy on a shape sweep with tails, size 1 and size 0",
          "[scale_copy]") {
  const int64_t shapes[][2] = {{1, 1},    {1, 129},  {33, 1},     {31, 127},
                               {32, 128}, {33, 130}, {257, 1000}, {4096, 7168},
                               {0, 5},    {5, 0},    {0, 0}};
  uint64_t seed = 1;
  for (auto [rows, cols] : shapes) {
    INFO(rows << "x" << cols);
    CHECK(mismatches(seeded(rows * cols, seed++), rows, cols, cols, cols,
                     1.25f) == 0);
  }
}

TEST_CASE("scale_copy follows strides and writes only inside the output",
          "[scale_copy]") {
  // Both tensors are views into wider rows; the padding must stay untouched.
  const int64_t rows = 77, cols = 200, x_ld = 256, out_ld = 203;
  CHECK(mismatches(seeded(rows * x_ld, 7), rows, cols, x_ld, out_ld, 3.5f) ==
        0);
}

TEST_CASE("scale_copy with 16-byte vectors: aligned rows, ragged ends",
          "[scale_copy]") {
  // Row strides of 16-byte multiples select the vectorised kernel; 202
  // columns leave a partial vector at the end of every row, and 129 rows a
  // partial tile.
  CHECK(mismatches(seeded(129 * 204, 11), 129, 202, 204, 208, 0.75f) == 0);
  CHECK(mismatches(seeded(3 * 4, 12), 3, 3, 4, 4, 2.0f) == 0);
  CHECK(mismatches(seeded(4096 * 7168, 13), 4096, 7168, 7168, 7168, 1.5f) == 0);
}
