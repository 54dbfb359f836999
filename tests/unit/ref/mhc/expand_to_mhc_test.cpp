// expand_to_mhc_test.cpp - Tests of the expand_to_mhc reference (spec §3.1):
// stream copies, the fp32 sum of the backward, edges and argument errors.
#include "mhc/reference.h"
#include "mhc_test_util.h"

using namespace mhc_test;
using namespace tilejit::mhc;

TEST_CASE("expand_to_mhc copies the row into every stream", "[ref][mhc]") {
  Vec v = to_bf16(randn(2 * 3 * 5, 1));
  HostTensor x = bf16({2, 3, 5}, v);
  HostTensor o = expand_to_mhc_ref(x, 4);
  REQUIRE(o.shape() == Shape{2, 3, 4, 5});
  REQUIRE(o.dtype() == DType::bf16);
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t b = 0; b < 3; ++b)
      for (int64_t m = 0; m < 4; ++m)
        for (int64_t h = 0; h < 5; ++h)
          CHECK(o.at<uint16_t>({a, b, m, h}) == x.at<uint16_t>({a, b, h}));
}

TEST_CASE("expand_to_mhc writes into out and keeps special values",
          "[ref][mhc]") {
  // NaN (with a payload), inf, -0, a bf16 subnormal and the bf16 max.
  const uint16_t bits[] = {0x7FC1, 0x7F80, 0x8000, 0x0001, 0x7F7F};
  HostTensor x = HostTensor::zeros(DType::bf16, {1, 5});
  std::copy(bits, bits + 5, x.data<uint16_t>());
  HostTensor out = HostTensor::zeros(DType::bf16, {1, 2, 5});
  HostTensor r = expand_to_mhc_ref(x, 2, out);
  CHECK(r.raw() == out.raw());
  for (int64_t m = 0; m < 2; ++m)
    for (int64_t h = 0; h < 5; ++h)
      CHECK(out.at<uint16_t>({0, m, h}) == bits[h]);
}

TEST_CASE("expand_to_mhc handles empty and size-1 dims", "[ref][mhc]") {
  CHECK(expand_to_mhc_ref(HostTensor::zeros(DType::bf16, {0, 8}), 4).shape() ==
        Shape{0, 4, 8});
  CHECK(expand_to_mhc_ref(HostTensor::zeros(DType::bf16, {3, 0}), 4).shape() ==
        Shape{3, 4, 0});
  HostTensor one = bf16({1}, {2.5});
  HostTensor o = expand_to_mhc_ref(one, 1);
  REQUIRE(o.shape() == Shape{1, 1});
  CHECK(values(o)[0] == 2.5);
  CHECK(expand_to_mhc_bwd_ref(HostTensor::zeros(DType::bf16, {0, 4, 8}))
            .shape() == Shape{0, 8});
}

TEST_CASE("expand_to_mhc backward sums the streams in fp32 from stream 0",
          "[ref][mhc]") {
  const double e8 = std::ldexp(1.0, -8), big = std::ldexp(1.0, 24);
  // Column 0: 1 + 2^-8 + 2^-8 = 1 + 2^-7 in fp32; a bf16 accumulator would
  // round 1 + 2^-8 back to 1 and give 1.
  // Column 1: 2^24 + 1 rounds to 2^24 (ties to even), minus 2^24 is 0; a
  // float64 sum or the reverse order would give 1.
  HostTensor g = bf16({1, 4, 2}, {1, big, e8, 1, e8, -big, 0, 0});
  Vec r = values(expand_to_mhc_bwd_ref(g));
  CHECK(r[0] == 1 + std::ldexp(1.0, -7));
  CHECK(r[1] == 0);
}

TEST_CASE("expand_to_mhc backward matches finite differences", "[ref][mhc]") {
  const int64_t n = 3, mhc = 4, hid = 6;
  Vec x = to_bf16(randn(n * hid, 2));
  Vec c = to_bf16(randn(n * mhc * hid, 3));
  auto loss = [&](const Vec &xv) {
    Vec o(n * mhc * hid);
    for (int64_t t = 0; t < n; ++t)
      for (int64_t m = 0; m < mhc; ++m)
        for (int64_t h = 0; h < hid; ++h)
          o[(t * mhc + m) * hid + h] = xv[t * hid + h];
    return dot(c, o);
  };
  Vec g = values(expand_to_mhc_bwd_ref(bf16({n, mhc, hid}, c)));
  check_gradient("hidden", x, loss, g, 1e-2, 1e-2);
}

TEST_CASE("expand_to_mhc rejects bad arguments", "[ref][mhc]") {
  HostTensor x = HostTensor::zeros(DType::bf16, {2, 8});
  // Wrong dtype.
  CHECK_USER_ERROR(expand_to_mhc_ref(HostTensor::zeros(DType::f32, {2, 8}), 4),
                   "expand_to_mhc_ref: argument 'hidden' has dtype f32; "
                   "requires bf16");
  // A scalar has no hidden dim.
  CHECK_USER_ERROR(expand_to_mhc_ref(HostTensor::zeros(DType::bf16, {}), 4),
                   "expand_to_mhc_ref: argument 'hidden' has shape []; "
                   "requires shape (..., H)");
  // A transposed view is not contiguous.
  CHECK_USER_ERROR(expand_to_mhc_ref(x.transposed(0, 1), 4),
                   "expand_to_mhc_ref: argument 'hidden' has shape [8, 2] and "
                   "strides [1, 8]; requires a contiguous tensor");
  // No streams.
  CHECK_USER_ERROR(expand_to_mhc_ref(x, 0),
                   "expand_to_mhc_ref: argument 'mhc_mult' is 0; requires "
                   ">= 1");
  // out has the wrong stream count.
  CHECK_USER_ERROR(
      expand_to_mhc_ref(x, 4, HostTensor::zeros(DType::bf16, {2, 2, 8})),
      "expand_to_mhc_ref: argument 'out' has shape [2, 2, 8]; requires [2, 4, "
      "8]");
  // The backward needs (..., mhc, H).
  CHECK_USER_ERROR(expand_to_mhc_bwd_ref(HostTensor::zeros(DType::bf16, {8})),
                   "expand_to_mhc_bwd_ref: argument 'out_grad' has shape [8]; "
                   "requires shape (..., mhc, H)");
}
