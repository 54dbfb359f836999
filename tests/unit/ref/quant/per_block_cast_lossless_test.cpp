// per_block_cast_lossless_test.cpp - per_block_cast_lossless (§9): the
// exponent rule by hand, the e_max < 6 edge, the 2^11 ratio check, and
// losslessness on random inputs for every tested block pair.
#include "test_util.h"

#include <catch2/catch.hpp>

using namespace quant_test;

namespace {

/// fp4 data (rows, K/2) with element (i, j) given by code(i, j).
template <class Code> HostTensor fp4(int64_t rows, int64_t cols, Code code) {
  HostTensor d = HostTensor::zeros(DType::i8, {rows, cols / 2});
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; j += 2)
      d.at<uint8_t>({i, j / 2}) =
          tilejit::ref::pack_e2m1x2(code(i, j), code(i, j + 1));
  return d;
}

} // namespace

TEST_CASE("per_block_cast_lossless: the exponent rule by hand",
          "[ref][quant]") {
  // Row 0: input blocks (1, 32) with sf 2^0 (code 7 = 6) and 2^-3 (code 1 =
  // 0.5). e_max = 127, e_out = 121 (2^-6); factors 2^6 and 2^3.
  HostTensor d = fp4(1, 64, [](int64_t, int64_t j) { return j < 32 ? 7 : 1; });
  QuantTensor in{d, f32(1, 2, {1.0f, 0.125f})};
  QuantTensor q = per_block_cast_lossless_ref(in, "e4m3", {1, 32}, {1, 64});
  REQUIRE(q.data.dtype() == DType::e4m3);
  REQUIRE(q.data.shape() == shape_t{1, 64});
  CHECK(get(q.sf, 0, 0) == std::ldexp(1.0f, -6));
  CHECK(byte_at(q.data, 0, 0) == 0x7C);  // 6 * 2^6 = 384
  CHECK(byte_at(q.data, 0, 40) == 0x48); // 0.5 * 2^3 = 4
  QuantTensor p = per_block_cast_lossless_ref(in, "e4m3", {1, 32}, {1, 64},
                                              true, false, true);
  CHECK(p.sf.dtype() == DType::i32);
  CHECK(p.sf.at<int32_t>({0, 0}) == 121);
  CHECK(compare_exact(p.data, q.data) == "");
}

TEST_CASE("per_block_cast_lossless: the smallest factor 2^-5 is exact, "
          "2^-6 traps",
          "[ref][quant]") {
  // sf [1, 2^-11]: e_out = 121, the second block's factor is 2^-5 and 0.5
  // becomes 2^-6, the smallest e4m3 normal.
  HostTensor d = fp4(1, 64, [](int64_t, int64_t) { return 1; });
  QuantTensor ok{d, f32(1, 2, {1.0f, std::ldexp(1.0f, -11)})};
  QuantTensor q = per_block_cast_lossless_ref(ok, "e4m3", {1, 32}, {1, 64});
  CHECK(get(q.data, 0, 40) == std::ldexp(1.0f, -6));
  QuantTensor bad{d, f32(1, 2, {1.0f, std::ldexp(1.0f, -12)})};
  CHECK_THROWS_WITH(per_block_cast_lossless_ref(bad, "e4m3", {1, 32}, {1, 64}),
                    "per_block_cast_lossless_ref: input scale factors of "
                    "output block [0, 0] have biased exponents 115 (at "
                    "x.sf[0, 1]) and 127; requires a max/min ratio of at most "
                    "2^11 (the original traps with a device assertion)");
}

TEST_CASE("per_block_cast_lossless: e_max < 6 gives e_out = 0 (sf 0.0)",
          "[ref][quant]") {
  HostTensor d = fp4(1, 32, [](int64_t, int64_t) { return 2; }); // 1.0
  QuantTensor in{d, f32(1, 1, {std::ldexp(1.0f, -125)})};        // e = 2
  QuantTensor q = per_block_cast_lossless_ref(in, "e4m3", {1, 32}, {1, 32});
  CHECK(get(q.sf, 0, 0) == 0.0f);
  CHECK(get(q.data, 0, 0) == 4.0f); // 1.0 * 2^(2 - 0)
}

TEST_CASE("per_block_cast_lossless: dequantized values are unchanged",
          "[ref][quant]") {
  // Like the original test: randn * 2^e with |x| lifted to max|x| / 2^9,
  // quantized to fp4 with (1, 32) blocks, re-blocked, compared after
  // cast_back. M = 130 leaves partial row blocks.
  const int64_t M = 130, K = 256;
  for (int e : {-100, 0, 100}) {
    HostTensor x = randn(DType::f32, M, K, 100 + e);
    float amax = 0;
    for (int64_t i = 0; i < M * K; ++i)
      amax = std::max(amax, std::fabs(x.data<float>()[i]));
    for (int64_t i = 0; i < M * K; ++i) {
      float &v = x.data<float>()[i];
      const float lo = amax / 512.0f;
      if (std::fabs(v) < lo)
        v = std::copysign(lo, v);
      v = std::ldexp(v, e);
    }
    for (bool in_packed : {false, true}) {
      QuantTensor in =
          cast_ref(x, "e2m1", {1, 32}, {}, {}, true, in_packed, in_packed);
      HostTensor expected = cast_back_ref(in, "fp32", {1, 32});
      for (BlockSize ob :
           {BlockSize{1, 128}, BlockSize{32, 32}, BlockSize{128, 128}})
        for (bool packed : {false, true}) {
          QuantTensor q = per_block_cast_lossless_ref(in, "e4m3", {1, 32}, ob,
                                                      packed, true, packed);
          CHECK(q.sf.shape()[0] == (M + ob.bm - 1) / ob.bm);
          CHECK(compare_exact(cast_back_ref(q, "fp32", ob), expected) == "");
        }
    }
  }
}

TEST_CASE("per_block_cast_lossless: M = 0 and argument checks",
          "[ref][quant]") {
  QuantTensor empty{HostTensor::zeros(DType::i8, {0, 64}),
                    alloc_sf(0, 4, SfLayout::row_major)};
  QuantTensor e = per_block_cast_lossless_ref(empty, "e4m3", {1, 32},
                                              {128, 128}, true, true, true);
  CHECK(e.data.shape() == shape_t{0, 128});
  CHECK(e.data.dtype() == DType::e4m3);
  CHECK(e.sf.shape() == shape_t{0, 1});
  CHECK(e.sf.dtype() == DType::i32);
  QuantTensor in{HostTensor::zeros(DType::i8, {2, 32}),
                 f32(2, 2, {1.0f, 1.0f, 1.0f, 1.0f})};
  const std::string fn = "per_block_cast_lossless_ref: ";
  CHECK_THROWS_WITH(per_block_cast_lossless_ref(in, "e2m1", {1, 32}, {1, 64}),
                    fn + "argument 'fmt' is 'e2m1'; requires 'e4m3'");
  CHECK_THROWS_WITH(per_block_cast_lossless_ref(
                        {HostTensor::zeros(DType::e4m3, {2, 64}), in.sf},
                        "e4m3", {1, 32}, {1, 64}),
                    fn + "argument 'x.data' has dtype e4m3; requires i8");
  CHECK_THROWS_WITH(per_block_cast_lossless_ref(
                        {HostTensor::zeros(DType::i8, {2, 24}), in.sf}, "e4m3",
                        {1, 32}, {1, 64}),
                    fn + "x.data has logical K = 48; requires K % 32 == 0");
  CHECK_THROWS_WITH(per_block_cast_lossless_ref(in, "e4m3", {1, 24}, {1, 64}),
                    fn + "argument 'x_block_size' is (1, 24); requires a "
                         "power-of-two bk");
  CHECK_THROWS_WITH(per_block_cast_lossless_ref(in, "e4m3", {1, 32}, {1, 96}),
                    fn + "argument 'out_block_size' is (1, 96); requires a "
                         "power-of-two bk");
  CHECK_THROWS_WITH(per_block_cast_lossless_ref(in, "e4m3", {2, 32}, {3, 64}),
                    fn + "argument 'out_block_size' is (3, 64); requires "
                         "multiples of x_block_size (2, 32)");
  CHECK_THROWS_WITH(per_block_cast_lossless_ref(in, "e4m3", {1, 32}, {1, 16}),
                    fn + "argument 'out_block_size' is (1, 16); requires "
                         "multiples of x_block_size (1, 32)");
  CHECK_THROWS_WITH(per_block_cast_lossless_ref(in, "e4m3", {1, 32}, {1, 64},
                                                false, true, true),
                    fn + "argument 'use_packed_ue8m0' is true with "
                         "use_tma_aligned_col_major_sf=false; requires it to "
                         "be true");
  CHECK_THROWS_WITH(
      per_block_cast_lossless_ref({in.data, f32(2, 2, {1, 1, 0.75f, 1})},
                                  "e4m3", {1, 32}, {1, 64}),
      fn + "x.sf[1, 0] is 0.75; requires a non-negative power of two (zero "
           "mantissa)");
  CHECK_THROWS_WITH(
      per_block_cast_lossless_ref({in.data, f32(2, 2, {1, -2.0f, 1, 1})},
                                  "e4m3", {1, 32}, {1, 64}),
      fn + "x.sf[0, 1] is -2; requires a non-negative power of two (zero "
           "mantissa)");
}
