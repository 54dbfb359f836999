// batched_transpose_weight_sf_test.cpp - TileKernels 2.1's
// batched_transpose_weight_sf (tk21_ops §3.7): bytes, replication along n
// and k, zero padding past Nk and Nn, the shapes and strides of both
// layouts (transposed too, with and without groups), and the checks.
#include "test_util.h"

#include <catch2/catch.hpp>

using namespace quant_test;

namespace {

uint8_t byte_of(const HostTensor &t, std::vector<int64_t> index, int j) {
  return static_cast<uint8_t>(
      static_cast<uint32_t>(t.data<int32_t>()[t.offset(index)]) >> (8 * j));
}

} // namespace

TEST_CASE("batched_transpose_weight_sf: bytes, replication, padding",
          "[ref][quant]") {
  // bs = 128, Nn = 2, Nk = 5: n = 256, k = 640, P0 = 2, P1 = 1.
  // sf[i][j] = 2^(i + j - 3), except sf[0][2] = 0.
  std::vector<float> v(10);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 5; ++j)
      v[i * 5 + j] = std::ldexp(1.0f, i + j - 3);
  v[2] = 0.0f;
  const auto outs =
      batched_transpose_weight_sf_ref({f32(2, 5, v)}, 128, {false});
  REQUIRE(outs.size() == 1);
  const HostTensor &sf0 = outs[0].first, &sf1 = outs[0].second;
  CHECK(sf0.shape() == shape_t{256, 2});
  CHECK(sf0.strides() == shape_t{1, 256});
  CHECK(sf1.shape() == shape_t{640, 1});
  CHECK(sf1.strides() == shape_t{1, 640});
  auto e = [](int i, int j) { return static_cast<uint8_t>(127 + i + j - 3); };
  for (int64_t r : {0, 127, 128, 255})
    for (int j = 0; j < 4; ++j) {
      INFO("sf0 row " << r << " byte " << j);
      const int i = static_cast<int>(r / 128);
      CHECK(byte_of(sf0, {r, 0}, j) == (i == 0 && j == 2 ? 0 : e(i, j)));
      // Word 1 holds column 4 and three padding bytes.
      CHECK(byte_of(sf0, {r, 1}, j) == (j == 0 ? e(i, 4) : 0));
    }
  for (int64_t c : {0, 300, 639})
    for (int j = 0; j < 4; ++j) {
      INFO("sf1 column " << c << " byte " << j);
      const int kb = static_cast<int>(c / 128);
      const uint8_t want = j >= 2 ? 0 : (j == 0 && kb == 2 ? 0 : e(j, kb));
      CHECK(byte_of(sf1, {c, 0}, j) == want);
    }
}

TEST_CASE("batched_transpose_weight_sf: groups, bs 32, a transposed sf1",
          "[ref][quant]") {
  // G = 2, Nn = 4, Nk = 8, bs = 32: n = 128, k = 256, P0 = 2, P1 = 1.
  std::vector<float> v(2 * 4 * 8, 1.0f);
  v[1 * 32 + 3 * 8 + 7] = 4.0f; // g 1, row block 3, column block 7
  const int64_t shape[] = {2, 4, 8};
  const HostTensor sf = HostTensor::from(DType::f32, shape, v);
  const auto outs =
      batched_transpose_weight_sf_ref({sf, sf}, 32, {false, true});
  REQUIRE(outs.size() == 2);
  const HostTensor &sf0 = outs[0].first;
  CHECK(sf0.shape() == shape_t{2, 128, 2});
  CHECK(sf0.strides() == shape_t{256, 1, 128});
  CHECK(byte_of(sf0, {1, 3 * 32 + 5, 1}, 3) == 129); // 4.0: exponent 129
  CHECK(byte_of(sf0, {1, 3 * 32 + 5, 1}, 2) == 127);
  CHECK(byte_of(sf0, {0, 3 * 32 + 5, 1}, 3) == 127);
  const HostTensor &plain = outs[0].second, &transposed = outs[1].second;
  CHECK(plain.shape() == shape_t{2, 256, 1});
  CHECK(plain.strides() == shape_t{256, 1, 256});
  CHECK(transposed.shape() == shape_t{2, 1, 256});
  CHECK(transposed.strides() == shape_t{256, 256, 1});
  for (int64_t c : {0, 7 * 32, 255})
    for (int j = 0; j < 4; ++j)
      CHECK(byte_of(plain, {1, c, 0}, j) == byte_of(transposed, {1, 0, c}, j));
  CHECK(byte_of(transposed, {1, 0, 7 * 32 + 1}, 3) == 129);
  CHECK(batched_transpose_weight_sf_ref({}, 128, {}).empty());
}

TEST_CASE("batched_transpose_weight_sf: argument checks", "[ref][quant]") {
  const std::string fn = "batched_transpose_weight_sf_ref: ";
  const HostTensor ok = f32(1, 1, {1.0f});
  CHECK_THROWS_WITH(batched_transpose_weight_sf_ref({ok}, 64, {false}),
                    fn + "argument 'block_size' is 64; requires 32 or 128");
  CHECK_THROWS_WITH(batched_transpose_weight_sf_ref({ok}, 128, {}),
                    fn + "argument 'transpose_sf1s' has 0 entries; requires "
                         "one per sf (1)");
  CHECK_THROWS_WITH(
      batched_transpose_weight_sf_ref({f32(1, 3, {1, 1, 1})}, 32, {false}),
      fn + "argument 'sf[0]' has shape [1, 3]; requires Nn x 32 "
           "and Nk x 32 multiples of 128 (and G > 0)");
  CHECK_THROWS_WITH(
      batched_transpose_weight_sf_ref({ok, f32(1, 1, {3.0f})}, 128,
                                      {false, false}),
      fn + "sf[1][0, 0, 0] is 3; requires a positive power of two or 0");
  CHECK_THROWS_WITH(
      batched_transpose_weight_sf_ref({f32(1, 1, {-2.0f})}, 128, {false}),
      fn + "sf[0][0, 0, 0] is -2; requires a positive power of two or 0");
}
