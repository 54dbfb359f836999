// per_channel_cast21_test.cpp - TileKernels 2.1's per_channel_cast
// (tk21_ops §3.5): 1.0's result at bm = 128, blocks of 32 rows, the
// column-pack UE8M0 scales, a quantized input as its dequantized values,
// and every argument check.
#include "test_util.h"

#include <catch2/catch.hpp>

#include <bit>
#include <cmath>

using namespace quant_test;

TEST_CASE("per_channel_cast 2.1: 1.0's result at 128 rows, 32-row blocks",
          "[ref][quant]") {
  const HostTensor x = randn(DType::bf16, 256, 384, 5, 3.0f);
  for (bool round : {false, true}) {
    const QuantTensor a = per_channel_cast_21_ref(x, "e4m3", 128, round);
    const QuantTensor b = per_channel_cast_ref(x, "e4m3", 128, round);
    CHECK(compare_exact(a.data, b.data) == "");
    CHECK(compare_exact(a.sf, b.sf) == "");
  }
  // bm = 32: each column's scale per 32 rows is its absmax / 448.
  const QuantTensor q = per_channel_cast_21_ref(x, "e4m3", 32);
  REQUIRE(q.sf.shape() == std::vector<int64_t>{8, 384});
  for (int64_t b = 0; b < 8; ++b)
    for (int64_t c = 0; c < 384; c += 37) {
      float amax = 0;
      for (int64_t i = 32 * b; i < 32 * b + 32; ++i)
        amax = std::max(amax, std::fabs(get(x, i, c)));
      REQUIRE(get(q.sf, b, c) == std::max(amax, 1e-4f) / 448.0f);
    }
}

TEST_CASE("per_channel_cast 2.1: column-pack UE8M0 scales", "[ref][quant]") {
  // 640 rows: 5 blocks of 128 (the second word's bytes 1-3 are 0) and 20
  // of 32 (whole words).
  const HostTensor x = randn(DType::f32, 640, 128, 6, 2.0f);
  for (int64_t bm : {128, 32}) {
    INFO("bm " << bm);
    const int64_t blocks = 640 / bm;
    const QuantTensor f = per_channel_cast_21_ref(x, "e4m3", bm, true);
    const QuantTensor p =
        per_channel_cast_21_ref(x, "e4m3", bm, true, std::nullopt, true);
    CHECK(compare_exact(p.data, f.data) == "");
    REQUIRE(p.sf.dtype() == DType::i32);
    REQUIRE(p.sf.shape() == std::vector<int64_t>{(blocks + 3) / 4, 128});
    for (int64_t b = 0; b < (blocks + 3) / 4 * 4; ++b)
      for (int64_t c = 0; c < 128; ++c) {
        const uint32_t word =
            static_cast<uint32_t>(p.sf.at<int32_t>({b / 4, c}));
        const uint32_t byte = (word >> (8 * (b % 4))) & 0xff;
        const uint32_t want =
            b < blocks ? std::bit_cast<uint32_t>(get(f.sf, b, c)) >> 23 : 0;
        REQUIRE(byte == want);
      }
  }
}

TEST_CASE("per_channel_cast 2.1: a quantized x is its dequantized values",
          "[ref][quant]") {
  const HostTensor x = randn(DType::f32, 128, 256, 7, 2.0f);
  for (int64_t bk : {32, 128}) {
    const QuantTensor in = per_token_cast_ref(x, "e4m3", bk);
    const HostTensor values = dequantize_ref(in, {1, bk});
    const QuantTensor a = per_channel_cast_21_ref(in, "e4m3", 128, false, bk);
    const QuantTensor b = per_channel_cast_21_ref(values, "e4m3", 128);
    CHECK(compare_exact(a.data, b.data) == "");
    CHECK(compare_exact(a.sf, b.sf) == "");
  }
}

TEST_CASE("per_channel_cast 2.1 refuses bad arguments", "[ref][quant]") {
  const std::string fn = "per_channel_cast_21_ref: ";
  const HostTensor x = randn(DType::f32, 128, 128, 1);
  CHECK_THROWS_WITH(per_channel_cast_21_ref(x, "e4m3", 64),
                    fn + "argument 'num_per_tokens' is 64; requires 32 or "
                         "128");
  CHECK_THROWS_WITH(
      per_channel_cast_21_ref(x, "e4m3", 128, false, std::nullopt, true),
      fn + "argument 'use_packed_ue8m0' is true; requires round_sf");
  CHECK_THROWS_WITH(
      per_channel_cast_21_ref(randn(DType::f32, 128, 192, 1), "e4m3", 128),
      fn + "argument 'x' has shape [128, 192]; requires M and K "
           "multiples of 128");
  CHECK_THROWS_WITH(per_channel_cast_21_ref(x, "e4m3", 128, false, 128),
                    fn + "argument 'num_per_channels' is 128 for a plain "
                         "tensor x; requires None");
  const QuantTensor q = per_token_cast_ref(x, "e4m3", 64);
  CHECK_THROWS_WITH(per_channel_cast_21_ref(q, "e4m3", 128, false, 64),
                    fn + "argument 'num_per_channels' is 64 for a "
                         "QuantTensor x; requires 32 or 128");
}
