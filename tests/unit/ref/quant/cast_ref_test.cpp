// cast_ref_test.cpp - The ground truth torch `cast` (§3.6), dequantize_ref
// and unpack_from_e2m1fn_x2 (§13): M = 0, precomputed sf, QuantTensor
// inputs, nibble order and argument checks.
#include "test_util.h"

#include <catch2/catch.hpp>

using namespace quant_test;

TEST_CASE("cast_ref: M = 0 outputs", "[ref][quant]") {
  HostTensor x = HostTensor::zeros(DType::f32, {0, 320});
  QuantTensor a = cast_ref(x, "e4m3", {32, 128});
  CHECK(a.data.dtype() == DType::e4m3);
  CHECK(a.data.shape() == shape_t{0, 320});
  CHECK(a.sf.dtype() == DType::f32);
  CHECK(a.sf.shape() == shape_t{0, 3});
  QuantTensor b = cast_ref(x, "e2m1", {1, 32}, {}, {}, true, true, true);
  CHECK(b.data.dtype() == DType::i8);
  CHECK(b.data.shape() == shape_t{0, 160});
  CHECK(b.sf.dtype() == DType::i32);
  CHECK(b.sf.shape() == shape_t{0, 3});
  QuantTensor c =
      cast_ref(x, "e4m3", {1, 32}, HostTensor::zeros(DType::f32, {0, 10}));
  CHECK(c.data.shape() == shape_t{0, 320});
}

TEST_CASE("cast_ref: a precomputed sf gives sf_inv = 1 / sf", "[ref][quant]") {
  HostTensor x = f32(2, 4, {3.0f, 1.0f, -1.0f, 0.0f, 1.0f, 1.0f, 1.0f, 1.0f});
  HostTensor sf = f32(1, 2, {3.0f, 0.25f});
  QuantTensor q = cast_ref(x, "e4m3", {2, 2}, sf);
  CHECK(q.sf.raw() == sf.raw()); // the given tensor is returned
  // 3 * fl(1/3) = 1 (rounded), 1 * fl(1/3) = 0.33333334 -> 0.34375 (0x2B)
  CHECK(byte_at(q.data, 0, 0) == 0x38);
  CHECK(byte_at(q.data, 0, 1) == 0x2B);
  CHECK(byte_at(q.data, 0, 2) == 0xC8); // -1 * 4 = -4
  CHECK(byte_at(q.data, 0, 3) == 0x00);
  CHECK(byte_at(q.data, 1, 2) == 0x48); // 4
}

TEST_CASE("cast_ref and dequantize_ref of a QuantTensor", "[ref][quant]") {
  // Row-major, column-major and packed input SFs dequantize alike.
  HostTensor x = randn(DType::bf16, 40, 128, 70, 4.0f);
  QuantTensor row = cast_ref(x, "e4m3", {32, 32}, {}, {}, true);
  QuantTensor packed = cast_ref(x, "e4m3", {32, 32}, {}, {}, true, true, true);
  HostTensor d = dequantize_ref(row, {32, 32});
  CHECK(d.dtype() == DType::f32);
  CHECK(d.shape() == shape_t{40, 128});
  CHECK(compare_exact(dequantize_ref(packed, {32, 32}), d) == "");
  for (int64_t i = 0; i < 40; ++i)
    for (int64_t j = 0; j < 128; ++j)
      REQUIRE(get(d, i, j) ==
              get(row.data, i, j) * get(row.sf, i / 32, j / 32));
  // Re-quantizing with the same blocks and power-of-two scales is the
  // identity.
  QuantTensor again = cast_ref(packed, "e4m3", {32, 32}, {}, BlockSize{32, 32},
                               true, true, true);
  CHECK(compare_exact(again.data, packed.data) == "");
  CHECK(compare_exact(again.sf, packed.sf) == "");
  CHECK_THROWS_WITH(dequantize_ref(row, {32, 64}),
                    "dequantize_ref: argument 'x.sf' has shape [2, 4]; "
                    "requires [2, 2]");
  CHECK_THROWS_WITH(
      dequantize_ref({HostTensor::zeros(DType::bf16, {2, 2}), row.sf},
                     {32, 32}),
      "dequantize_ref: argument 'x.data' has dtype bf16; requires e4m3 or i8");
}

TEST_CASE("cast_ref: argument checks", "[ref][quant]") {
  HostTensor x = HostTensor::zeros(DType::f32, {4, 64});
  CHECK_THROWS_WITH(cast_ref(x, "e5m6", {1, 64}),
                    "cast_ref: argument 'fmt' is 'e5m6'; requires 'e4m3' or "
                    "'e2m1'");
  CHECK_THROWS_WITH(cast_ref(x, "e4m3", {1, -1}),
                    "cast_ref: argument 'block_size' is (1, -1); requires "
                    "positive sizes");
  CHECK_THROWS_WITH(cast_ref(f32(1, 3, {0, 0, 0}), "e2m1", {1, 3}),
                    "cast_ref: x has K = 3 columns; 'e2m1' requires an even K");
  CHECK_THROWS_WITH(cast_ref(x, "e4m3", {1, 64},
                             alloc_sf(4, 1, SfLayout::row_major), {}, true,
                             true),
                    "cast_ref: a precomputed 'sf' requires "
                    "use_tma_aligned_col_major_sf and use_packed_ue8m0 to be "
                    "false");
  CHECK_THROWS_WITH(
      cast_ref(x, "e4m3", {1, 32}, alloc_sf(4, 1, SfLayout::row_major)),
      "cast_ref: argument 'sf' has shape [4, 1]; requires "
      "[4, 2]");
  CHECK_THROWS_WITH(cast_ref(x, "e4m3", {1, 64}, {}, {}, false, false, true),
                    "cast_ref: argument 'use_packed_ue8m0' is true with "
                    "use_tma_aligned_col_major_sf=false and round_sf=false; "
                    "requires both to be true");
}

TEST_CASE("unpack_from_e2m1fn_x2: low nibble first, code 8 is -0.0",
          "[ref][quant]") {
  const int64_t shape[] = {1, 3};
  HostTensor x = HostTensor::from(DType::u8, shape,
                                  std::vector<uint8_t>{0x71, 0x8F, 0xA3});
  HostTensor f = unpack_from_e2m1fn_x2_ref(x);
  REQUIRE(f.dtype() == DType::f32);
  REQUIRE(f.shape() == shape_t{1, 6});
  const float expected[6] = {0.5f, 6.0f, -6.0f, -0.0f, 1.5f, -1.0f};
  for (int64_t j = 0; j < 6; ++j) {
    CHECK(get(f, 0, j) == expected[j]);
    CHECK(std::signbit(get(f, 0, j)) == std::signbit(expected[j]));
  }
  HostTensor b = unpack_from_e2m1fn_x2_ref(x, DType::bf16);
  CHECK(b.dtype() == DType::bf16);
  CHECK(b.at<uint16_t>({0, 3}) == 0x8000);
  CHECK(get(b, 0, 1) == 6.0f);
  HostTensor h = unpack_from_e2m1fn_x2_ref(x, DType::f16);
  CHECK(get(h, 0, 5) == -1.0f);
  // Every code, through a signed int8 tensor of 3 dims.
  std::vector<int8_t> all(128);
  for (int i = 0; i < 128; ++i)
    all[i] = static_cast<int8_t>(((2 * i) & 0xF) | (((2 * i + 1) & 0xF) << 4));
  const int64_t s3[] = {2, 4, 16};
  HostTensor y = HostTensor::from(DType::i8, s3, all);
  HostTensor g = unpack_from_e2m1fn_x2_ref(y, DType::f64);
  REQUIRE(g.shape() == shape_t{2, 4, 32});
  for (int64_t i = 0; i < 256; ++i)
    REQUIRE(g.data<double>()[i] ==
            tilejit::ref::e2m1_to_f32(static_cast<uint8_t>(i % 16)));
  // A strided (transposed) input is read in logical order.
  HostTensor t = unpack_from_e2m1fn_x2_ref(
      HostTensor::from(DType::u8, shape, std::vector<uint8_t>{0x71, 0x8F, 0xA3})
          .reinterpret(DType::u8, std::vector<int64_t>{3, 1})
          .transposed(0, 1));
  CHECK(compare_exact(t, f) == "");
  // Empty.
  CHECK(
      unpack_from_e2m1fn_x2_ref(HostTensor::zeros(DType::i8, {0, 4})).shape() ==
      shape_t{0, 8});
  CHECK_THROWS_WITH(
      unpack_from_e2m1fn_x2_ref(HostTensor::zeros(DType::f32, {2})),
      "unpack_from_e2m1fn_x2_ref: argument 'x' has dtype f32; requires i8 or "
      "u8");
  CHECK_THROWS_WITH(
      unpack_from_e2m1fn_x2_ref(HostTensor::zeros(DType::u8, {2}), DType::i32),
      "unpack_from_e2m1fn_x2_ref: argument 'out_dtype' is i32; requires f32, "
      "f16, bf16 or f64");
  CHECK_THROWS_WITH(
      unpack_from_e2m1fn_x2_ref(HostTensor::zeros(DType::u8, {})),
      "unpack_from_e2m1fn_x2_ref: argument 'x' has shape []; requires ndim >= "
      "1");
}
