// per_block_cast_test.cpp - per_block_cast and its variants (§8): hand
// cases with a partial row block, layouts, variants, the bound, checks.
#include "test_util.h"

#include <catch2/catch.hpp>

using namespace quant_test;

TEST_CASE("per_block_cast: amax over the whole block, partial row blocks",
          "[ref][quant]") {
  // M = 33, K = 64, blocks (32, 32): the second row block has one row.
  std::vector<float> v(33 * 64, 0.0f);
  v[0 * 64 + 0] = 1.0f;
  v[5 * 64 + 3] = 7.0f;    // amax of block (0, 0): sf = 1/64, sf_inv = 64
  v[31 * 64 + 40] = 0.5f;  // block (0, 1)
  v[32 * 64 + 40] = -3.0f; // block (1, 1)
  HostTensor x = f32(33, 64, v);
  QuantTensor q = per_block_cast_ref(x, "e4m3", {32, 32});
  REQUIRE(q.sf.shape() == shape_t{2, 2});
  CHECK(get(q.sf, 0, 0) == 1.0f / 64.0f);
  CHECK(byte_at(q.data, 5, 3) == 0x7E); // 448
  CHECK(byte_at(q.data, 0, 0) == 0x68); // 64 = 2^6
  CHECK(get(q.sf, 0, 1) == 0.5f / 448.0f);
  CHECK(byte_at(q.data, 31, 40) == 0x7E);
  CHECK(get(q.sf, 1, 1) == 3.0f / 448.0f);
  CHECK(byte_at(q.data, 32, 40) == 0xFE);
  CHECK(get(q.sf, 1, 0) == 1e-4f / 448.0f); // an all-zero block
  // The ground truth agrees.
  QuantTensor t = cast_ref(x, "e4m3", {32, 32});
  CHECK(compare_exact(q.data, t.data) == "");
  CHECK(compare_exact(q.sf, t.sf) == "");
}

TEST_CASE("per_block_cast: layouts, fp4 and M = 0", "[ref][quant]") {
  HostTensor x = randn(DType::bf16, 100, 192, 8);
  QuantTensor p = per_block_cast_ref(x, "e2m1", {32, 32}, true, true, true);
  CHECK(p.data.dtype() == DType::i8);
  CHECK(p.data.shape() == shape_t{100, 96});
  CHECK(p.sf.dtype() == DType::i32);
  CHECK(p.sf.shape() == shape_t{4, 2});
  CHECK(p.sf.strides() == shape_t{1, 4});
  QuantTensor r = per_block_cast_ref(x, "e2m1", {32, 32}, false, true);
  CHECK(r.sf.shape() == shape_t{4, 6});
  CHECK(r.sf.strides() == shape_t{6, 1});
  CHECK(compare_exact(p.data, r.data) == "");
  for (int64_t m = 0; m < 4; ++m)
    for (int64_t k = 0; k < 6; ++k)
      CHECK(read_sf(p.sf, m, k) == get(r.sf, m, k));
  QuantTensor c = per_block_cast_ref(x, "e4m3", {128, 32}, true, false);
  CHECK(c.sf.shape() == shape_t{1, 6});
  CHECK(c.sf.strides() == shape_t{1, 4});
  QuantTensor e = per_block_cast_ref(HostTensor::zeros(DType::f32, {0, 128}),
                                     "e2m1", {128, 128}, true, true, true);
  CHECK(e.data.shape() == shape_t{0, 64});
  CHECK(e.sf.shape() == shape_t{0, 1});
  CHECK(e.sf.dtype() == DType::i32);
}

TEST_CASE("per_block_cast: sf-only and precomputed-sf variants",
          "[ref][quant]") {
  HostTensor x = randn(DType::f32, 70, 256, 12, 4.0f);
  for (const char *fmt : {"e4m3", "e2m1"})
    for (BlockSize b : {BlockSize{32, 32}, BlockSize{128, 128},
                        BlockSize{128, 32}, BlockSize{32, 128}}) {
      QuantTensor q = per_block_cast_ref(x, fmt, b, false, true);
      CHECK(
          compare_exact(per_block_cast_with_sf_only_ref(x, fmt, b, false, true),
                        q.sf) == "");
      CHECK(
          compare_exact(per_block_cast_with_precomputed_sf_ref(x, fmt, b, q.sf),
                        q.data) == "");
      QuantTensor n = per_block_cast_ref(x, fmt, b);
      CHECK(
          compare_exact(per_block_cast_with_precomputed_sf_ref(x, fmt, b, n.sf),
                        cast_ref(x, fmt, b, n.sf).data) == "");
    }
}

TEST_CASE("per_block_cast then cast_back stays within the format's bound",
          "[ref][quant]") {
  HostTensor x = randn(DType::bf16, 70, 256, 13, 50.0f);
  for (Fmt f : {Fmt::e4m3, Fmt::e2m1})
    for (BlockSize b : {BlockSize{32, 32}, BlockSize{128, 128}})
      for (bool round : {false, true}) {
        QuantTensor q = per_block_cast_ref(x, fmt_name(f), b, false, round);
        HostTensor back = cast_back_ref(q, "fp32", b);
        for (int64_t i = 0; i < 70; ++i)
          for (int64_t j = 0; j < 256; ++j)
            REQUIRE(
                std::fabs(get(back, i, j) - get(x, i, j)) <=
                error_bound(f, get(x, i, j), get(q.sf, i / b.bm, j / b.bk)));
      }
}

TEST_CASE("per_block_cast: argument checks", "[ref][quant]") {
  HostTensor x = HostTensor::zeros(DType::bf16, {64, 128});
  CHECK_THROWS_WITH(per_block_cast_ref(x, "e5m6", {32, 32}),
                    "per_block_cast_ref: argument 'fmt' is 'e5m6'; requires "
                    "'e4m3' or 'e2m1'");
  CHECK_THROWS_WITH(per_block_cast_ref(x, "e4m3", {64, 32}),
                    "per_block_cast_ref: argument 'block_size' is (64, 32); "
                    "requires bm and bk in {32, 128}");
  CHECK_THROWS_WITH(
      per_block_cast_ref(HostTensor::zeros(DType::bf16, {64, 96}), "e4m3",
                         {32, 32}),
      "per_block_cast_ref: argument 'x' has K = 96 columns; requires "
      "K % 64 == 0");
  CHECK_THROWS_WITH(
      per_block_cast_ref(
          HostTensor::zeros(DType::bf16, {128, 64}).transposed(0, 1), "e4m3",
          {32, 32}),
      "per_block_cast_ref: argument 'x' is bf16[64, 128] "
      "strides [1, 64]; requires a contiguous tensor");
  CHECK_THROWS_WITH(
      per_block_cast_ref(HostTensor::zeros(DType::e4m3, {64, 128}), "e4m3",
                         {32, 32}),
      "per_block_cast_ref: argument 'x' has dtype e4m3; requires bf16 or f32");
  CHECK_THROWS_WITH(
      per_block_cast_with_sf_only_ref(x, "e4m3", {32, 32}, true, false, true),
      "per_block_cast_with_sf_only_ref: argument "
      "'use_packed_ue8m0' is true with "
      "use_tma_aligned_col_major_sf=true and round_sf=false; "
      "requires both to be true");
  CHECK_THROWS_WITH(
      per_block_cast_with_precomputed_sf_ref(
          x, "e4m3", {32, 32}, HostTensor::zeros(DType::f32, {2, 4}), true),
      "per_block_cast_with_precomputed_sf_ref: a precomputed "
      "'sf' requires use_tma_aligned_col_major_sf and "
      "use_packed_ue8m0 to be false");
  CHECK_THROWS_WITH(
      per_block_cast_with_precomputed_sf_ref(
          x, "e4m3", {32, 32}, HostTensor::zeros(DType::f32, {2, 3})),
      "per_block_cast_with_precomputed_sf_ref: argument 'sf' "
      "has shape [2, 3]; requires [2, 4]");
}
