// harness_compare_test.cpp - The harness's comparisons (exact, allclose,
// rows_summed, calc_diff): elements read in row-major order whatever the
// strides, every dtype decoded as ref::element_as_double reads it, and the
// first element off named by its index.
#include "op_test.h"

#include "common/convert.h"
#include "common/host_tensor.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <random>

using namespace tilejit;

namespace {

const harness::RunData run;

ref::HostTensor f32(std::vector<int64_t> shape, std::vector<float> values) {
  return ref::HostTensor::from(DType::f32, shape, values);
}

} // namespace

TEST_CASE("allclose and calc_diff read strided outputs in row-major order",
          "[harness]") {
  // want: 0 1 2 / 3 4 5; got: the same values held column-major (strides
  // 1, 2), but for [1, 0], which reads 9.
  const int64_t shape[2] = {2, 3}, strides[2] = {1, 2};
  ref::HostTensor want = f32({2, 3}, {0, 1, 2, 3, 4, 5});
  std::vector<float> columns{0, 9, 1, 4, 2, 5};
  ref::HostTensor got =
      ref::HostTensor::view(columns.data(), DType::f32, shape, strides);
  CHECK(harness::allclose(0, 0).fn(got, want, run) ==
        "[1, 0]: 9 vs reference 3");
  columns[1] = 3;
  CHECK(harness::allclose(0, 0).fn(got, want, run) == "");
  CHECK(harness::calc_diff(1e-8).fn(got, want, run) == "");
  for (float &v : columns)
    v = -v;
  CHECK(harness::calc_diff(1e-8).fn(got, want, run) ==
        "calc_diff 2, requires below 1e-08");
}

TEST_CASE("allclose names the first element off in a rank-3 tensor whose "
          "rows are strided",
          "[harness]") {
  // got holds [2, 3, 4] with its rows 8 floats apart (padded), its last
  // dimension 2 apart.
  std::vector<float> padded(2 * 3 * 8, -1.0f), dense(2 * 3 * 4);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k) {
        const float v = float(100 * i + 10 * j + k);
        padded[(i * 3 + j) * 8 + 2 * k] = v;
        dense[(i * 3 + j) * 4 + k] = v;
      }
  const int64_t shape[3] = {2, 3, 4}, strides[3] = {24, 8, 2};
  ref::HostTensor got =
      ref::HostTensor::view(padded.data(), DType::f32, shape, strides);
  ref::HostTensor want = f32({2, 3, 4}, dense);
  CHECK(harness::allclose(0, 0).fn(got, want, run) == "");
  padded[(1 * 3 + 2) * 8 + 2 * 1] += 0.5f;  // [1, 2, 1]
  padded[(1 * 3 + 2) * 8 + 2 * 3] += 0.75f; // [1, 2, 3], after it
  CHECK(harness::allclose(0, 0).fn(got, want, run) ==
        "[1, 2, 1]: 121.5 vs reference 121");
  CHECK(harness::allclose(0, 0.75).fn(got, want, run) == "");
  CHECK(harness::allclose(0.6 / 121, 0).fn(got, want, run) ==
        "[1, 2, 3]: 123.75 vs reference 123");
}

TEST_CASE("the comparisons decode every dtype as element_as_double does",
          "[harness]") {
  std::mt19937 rng(7);
  for (DType dtype :
       {DType::f32, DType::f64, DType::f16, DType::bf16, DType::e4m3,
        DType::e5m2, DType::i8, DType::u8, DType::boolean, DType::i32,
        DType::u32, DType::i64, DType::u64}) {
    CAPTURE(name_of(dtype));
    const int64_t shape[2] = {3, 5};
    ref::HostTensor t = ref::HostTensor::zeros(dtype, shape);
    std::vector<uint8_t> bytes(size_t(t.numel() * size_of(dtype)));
    for (uint8_t &b : bytes)
      b = uint8_t(rng() & 0x3f); // finite in every float format
    std::memcpy(t.raw(), bytes.data(), bytes.size());
    // An f64 copy of t made element by element: equal to t in every
    // comparison if and only if each element decodes the same.
    ref::HostTensor as_f64 = ref::HostTensor::zeros(DType::f64, shape);
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 5; ++j) {
        const int64_t index[2] = {i, j};
        as_f64.at<double>({i, j}) = ref::element_as_double(t, index);
      }
    CHECK(harness::allclose(0, 0).fn(t, as_f64, run) == "");
    CHECK(harness::allclose(0, 0).fn(as_f64, t, run) == "");
    double &last = as_f64.at<double>({2, 4});
    last = 2 * last + 1; // off by more than a rounding at 2^56 (i64)
    CHECK(harness::allclose(0, 0).fn(t, as_f64, run).starts_with("[2, 4]: "));
  }
}

TEST_CASE("a rank-0 output is compared as one element", "[harness]") {
  ref::HostTensor got = f32({}, {2}), want = f32({}, {3});
  CHECK(harness::allclose(0, 0).fn(got, want, run) == "[]: 2 vs reference 3");
  CHECK(harness::allclose(0, 1).fn(got, want, run) == "");
  CHECK(harness::calc_diff(0.08).fn(got, want, run) == ""); // 1/13
  CHECK(harness::calc_diff(0.07).fn(got, want, run) ==
        "calc_diff 0.0769, requires below 0.07");
}

TEST_CASE("rows_summed adds got's rows and names the element of the sum "
          "off",
          "[harness]") {
  ref::HostTensor got = f32({3, 2}, {1, 10, 2, 20, 3, 30});
  CHECK(harness::rows_summed(0, 0).fn(got, f32({1, 2}, {6, 60}), run) == "");
  CHECK(harness::rows_summed(0, 0).fn(got, f32({1, 2}, {6, 61}), run) ==
        "element 1 of the rows' sum: 60 vs reference 61");
  CHECK(harness::rows_summed(0, 0).fn(got, f32({1, 3}, {6, 60, 0}), run) ==
        "got f32[3, 2] strides [2, 1], expected rows of f32[1, 3] strides "
        "[3, 1]");
}

TEST_CASE("exact compares dense and strided tensors and names the first "
          "difference",
          "[harness]") {
  ref::HostTensor want = f32({2, 3}, {0, 1, 2, 3, 4, 5});
  ref::HostTensor same = want.clone();
  CHECK(harness::exact().fn(same, want, run) == "");
  same.at<float>({1, 1}) = 4.5f;
  CHECK(harness::exact().fn(same, want, run) ==
        "first difference at [1, 1]: 4.5 vs 4 in f32[2, 3] strides [3, 1]");
  // The same values column-major: equal elements, other strides, which
  // exact() requires equal and compare_exact can leave out.
  std::vector<float> columns{0, 3, 1, 4, 2, 5};
  const int64_t shape[2] = {2, 3}, strides[2] = {1, 2};
  ref::HostTensor got =
      ref::HostTensor::view(columns.data(), DType::f32, shape, strides);
  CHECK(harness::exact().fn(got, want, run) ==
        "got strides of f32[2, 3] strides [1, 2], expected f32[2, 3] strides "
        "[3, 1]");
  CHECK(ref::compare_exact(got, want, false) == "");
  columns[5] = 6;
  CHECK(ref::compare_exact(got, want, false) ==
        "first difference at [1, 2]: 6 vs 5 in f32[2, 3] strides [1, 2]");
}
