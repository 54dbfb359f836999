// per_token_cast_edge_test.cpp - per_token_cast (§4): every argument
// check's message, and edge values (subnormals, saturation, size 1).
#include "test_util.h"

#include <catch2/catch.hpp>

using namespace quant_test;

TEST_CASE("per_token_cast: argument checks", "[ref][quant]") {
  HostTensor x = HostTensor::zeros(DType::bf16, {4, 256});
  QuantTensor qx{HostTensor::zeros(DType::e4m3, {4, 256}),
                 HostTensor::zeros(DType::f32, {4, 8})};
  CHECK_THROWS_WITH(per_token_cast_ref(x, "e5m2", 128),
                    "per_token_cast_ref: argument 'fmt' is 'e5m2'; requires "
                    "'e4m3', 'e2m1' or 'e5m6'");
  CHECK_THROWS_WITH(per_token_cast_ref(x, "e4m3", 48),
                    "per_token_cast_ref: argument 'num_per_channels' is 48; "
                    "requires 16, 32, 64, 128, or K when K % 64 == 0");
  CHECK_THROWS_WITH(
      per_token_cast_ref(HostTensor::zeros(DType::bf16, {4, 96}), "e4m3", 96),
      "per_token_cast_ref: argument 'num_per_channels' is 96; requires 16, "
      "32, 64, 128, or K when K % 64 == 0");
  CHECK_THROWS_WITH(
      per_token_cast_ref(HostTensor::zeros(DType::i32, {4, 256}), "e4m3", 128),
      "per_token_cast_ref: argument 'x' has dtype i32; requires bf16 or f32");
  CHECK_THROWS_WITH(
      per_token_cast_ref(HostTensor::zeros(DType::f32, {256}), "e4m3", 128),
      "per_token_cast_ref: argument 'x' has shape [256]; requires a 2-D "
      "tensor");
  CHECK_THROWS_WITH(
      per_token_cast_ref(x.transposed(0, 1), "e4m3", 4),
      "per_token_cast_ref: argument 'x' is bf16[256, 4] strides "
      "[1, 256]; requires a contiguous last dimension (stride 1)");
  CHECK_THROWS_WITH(per_token_cast_ref(x, "e4m3", 128, BlockSize{1, 128}),
                    "per_token_cast_ref: argument 'x_block_size' is (1, 128) "
                    "for a plain tensor x; requires None (it describes a "
                    "QuantTensor input)");
  CHECK_THROWS_WITH(per_token_cast_ref(qx, "e4m3", 128),
                    "per_token_cast_ref: argument 'x_block_size' is None for "
                    "a QuantTensor x; requires the input's (bm, bk)");
  CHECK_THROWS_WITH(per_token_cast_ref(qx, "e4m3", 128, BlockSize{0, 32}),
                    "per_token_cast_ref: argument 'x_block_size' is (0, 32); "
                    "requires positive sizes");
  CHECK_THROWS_WITH(
      per_token_cast_ref(
          QuantTensor{HostTensor::zeros(DType::u8, {4, 256}), qx.sf}, "e4m3",
          128, BlockSize{1, 32}),
      "per_token_cast_ref: argument 'x.data' has dtype u8; requires e4m3 or "
      "i8");
  CHECK_THROWS_WITH(per_token_cast_ref(qx, "e4m3", 128, BlockSize{1, 64}),
                    "per_token_cast_ref: argument 'x.sf' has shape [4, 8]; "
                    "requires [4, 4]");
  CHECK_THROWS_WITH(per_token_cast_ref(qx, "e4m3", 256, BlockSize{1, 32}),
                    "per_token_cast_ref: argument 'num_per_channels' equals "
                    "K = 256 (one group per row); that mode requires a plain "
                    "tensor x and the full per_token_cast");
  CHECK_THROWS_WITH(per_token_cast_with_sf_only_ref(x, "e4m3", 256),
                    "per_token_cast_with_sf_only_ref: argument "
                    "'num_per_channels' equals K = 256 (one group per row); "
                    "that mode requires a plain tensor x and the full "
                    "per_token_cast");
  CHECK_THROWS_WITH(per_token_cast_with_precomputed_sf_ref(
                        x, "e4m3", 256, HostTensor::zeros(DType::f32, {4, 1})),
                    "per_token_cast_with_precomputed_sf_ref: argument "
                    "'num_per_channels' equals K = 256 (one group per row); "
                    "that mode requires a plain tensor x and the full "
                    "per_token_cast");
  CHECK_THROWS_WITH(
      per_token_cast_with_sf_only_ref(qx, "e4m3", 32, BlockSize{1, 32}),
      "per_token_cast_with_sf_only_ref: argument 'x' is a QuantTensor; this "
      "variant requires a plain bf16 or f32 tensor");
  CHECK_THROWS_WITH(per_token_cast_with_precomputed_sf_ref(
                        qx, "e4m3", 32, HostTensor::zeros(DType::f32, {4, 8}),
                        BlockSize{1, 32}),
                    "per_token_cast_with_precomputed_sf_ref: argument 'x' is "
                    "a QuantTensor; this variant requires a plain bf16 or f32 "
                    "tensor");
  CHECK_THROWS_WITH(
      per_token_cast_ref(QuantTensor{HostTensor::zeros(DType::e4m3, {4, 96}),
                                     HostTensor::zeros(DType::f32, {4, 2})},
                         "e4m3", 32, BlockSize{1, 48}),
      "per_token_cast_ref: argument 'x_block_size' is (1, 48); its bk must "
      "divide or be a multiple of num_per_channels = 32");
  CHECK_THROWS_WITH(
      per_token_cast_ref(HostTensor::zeros(DType::f32, {4, 33}), "e2m1", 16),
      "per_token_cast_ref: x has K = 33 columns; 'e2m1' requires an even K");
  CHECK_THROWS_WITH(per_token_cast_ref(x, "e4m3", 128, {}, true, false, true),
                    "per_token_cast_ref: argument 'use_packed_ue8m0' is true "
                    "with use_tma_aligned_col_major_sf=true and "
                    "round_sf=false; requires both to be true");
  CHECK_THROWS_WITH(per_token_cast_ref(x, "e4m3", 128, {}, false, true, true),
                    "per_token_cast_ref: argument 'use_packed_ue8m0' is true "
                    "with use_tma_aligned_col_major_sf=false and "
                    "round_sf=true; requires both to be true");
  CHECK_THROWS_WITH(per_token_cast_with_sf_only_ref(x, "e5m6", 256),
                    "per_token_cast_with_sf_only_ref: argument 'fmt' is "
                    "'e5m6'; requires 'e4m3' or 'e2m1'");
  CHECK_THROWS_WITH(per_token_cast_ref(qx, "e5m6", 256, BlockSize{1, 32}),
                    "per_token_cast_ref: fmt 'e5m6' requires a plain bf16 or "
                    "f32 tensor x and x_block_size None");
  CHECK_THROWS_WITH(per_token_cast_ref(x, "e5m6", 256, BlockSize{1, 32}),
                    "per_token_cast_ref: fmt 'e5m6' requires a plain bf16 or "
                    "f32 tensor x and x_block_size None");
  SECTION("precomputed sf") {
    const char *fn = "per_token_cast_with_precomputed_sf_ref: ";
    CHECK_THROWS_WITH(per_token_cast_with_precomputed_sf_ref(
                          x, "e4m3", 128, alloc_sf(4, 2, SfLayout::col_major),
                          {}, true, true),
                      std::string(fn) +
                          "a precomputed 'sf' requires "
                          "use_tma_aligned_col_major_sf and use_packed_ue8m0 "
                          "to be false");
    CHECK_THROWS_WITH(
        per_token_cast_with_precomputed_sf_ref(
            x, "e4m3", 128, HostTensor::zeros(DType::f32, {4, 3})),
        std::string(fn) + "argument 'sf' has shape [4, 3]; requires [4, 2]");
    CHECK_THROWS_WITH(
        per_token_cast_with_precomputed_sf_ref(
            x, "e4m3", 128, HostTensor::zeros(DType::i32, {4, 2})),
        std::string(fn) + "argument 'sf' has dtype i32; requires f32 or e4m3");
    CHECK_THROWS_WITH(per_token_cast_with_precomputed_sf_ref(
                          x, "e4m3", 128, alloc_sf(4, 2, SfLayout::col_major)),
                      std::string(fn) +
                          "argument 'sf' is f32[4, 2] strides [1, 4]; "
                          "requires a contiguous last dimension (stride 1)");
  }
}

TEST_CASE("per_token_cast: edge values (e4m3 subnormals, fp32 subnormals, "
          "saturation, size 1)",
          "[ref][quant]") {
  // amax 448: sf = 1, so the codes are those of the values.
  HostTensor x =
      f32(1, 16,
          {448.0f, std::ldexp(1.0f, -9), std::ldexp(1.0f, -10),
           std::ldexp(3.0f, -10), 1e-40f, -1e-40f, std::ldexp(1.0f, -6),
           -std::ldexp(7.0f, -9), 0, 0, 0, 0, 0, 0, 0, 0});
  QuantTensor q = per_token_cast_ref(x, "e4m3", 16);
  REQUIRE(q.sf.shape() == shape_t{1, 1});
  CHECK(get(q.sf, 0, 0) == 1.0f);
  CHECK(byte_at(q.data, 0, 1) == 0x01); // smallest subnormal 2^-9
  CHECK(byte_at(q.data, 0, 2) == 0x00); // half of it: tie to even -> 0
  CHECK(byte_at(q.data, 0, 3) == 0x02); // 1.5 quanta: tie to even -> 2
  CHECK(byte_at(q.data, 0, 4) == 0x00); // an fp32 subnormal
  CHECK(byte_at(q.data, 0, 5) == 0x80); // a negative one: -0
  CHECK(byte_at(q.data, 0, 6) == 0x08); // smallest normal 2^-6
  CHECK(byte_at(q.data, 0, 7) == 0x87); // -7 * 2^-9, largest subnormal
  // A row of fp32 subnormals only: amax clamps to 1e-4.
  QuantTensor s = per_token_cast_ref(f32(1, 16, std::vector<float>(16, 1e-40f)),
                                     "e4m3", 16, {}, false, true);
  CHECK(get(s.sf, 0, 0) == std::ldexp(1.0f, -22));
  // A precomputed sf smaller than amax / 448 saturates to +-448 / +-6.
  std::vector<float> bv(32, 0.0f);
  bv[0] = 1000.0f, bv[1] = -1e30f, bv[2] = 7.0f, bv[3] = -6.5f;
  HostTensor big = f32(1, 32, bv);
  HostTensor one = f32(1, 2, {1.0f, 1.0f});
  HostTensor e4 = per_token_cast_with_precomputed_sf_ref(big, "e4m3", 16, one);
  CHECK(byte_at(e4, 0, 0) == 0x7E);
  CHECK(byte_at(e4, 0, 1) == 0xFE);
  HostTensor e2 = per_token_cast_with_precomputed_sf_ref(big, "e2m1", 16, one);
  CHECK(byte_at(e2, 0, 0) == 0xF7); // 6 | -6 << 4
  CHECK(byte_at(e2, 0, 1) == 0xF7); // 7 -> 6, -6.5 -> -6
  // The largest finite float32 input.
  QuantTensor m = per_token_cast_ref(
      f32(1, 16,
          {3.4028235e38f, 1.0f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}),
      "e4m3", 16, {}, false, true);
  // sf = FLT_MAX / 448 = 1.14 * 2^119, rounded up to 2^120; FLT_MAX * 2^-120
  // = 256 - 2^-16 rounds to 256 (0x78); 1.0 * 2^-120 underflows to 0.
  CHECK(get(m.sf, 0, 0) == std::ldexp(1.0f, 120));
  CHECK(byte_at(m.data, 0, 0) == 0x78);
  CHECK(byte_at(m.data, 0, 1) == 0x00);
}
