// per_token_cast_test.cpp - per_token_cast and its variants (§4): hand
// cases, partial groups, M = 0, SF layouts, fp4 nibble order,
// re-quantization, the round trip bound and every argument check.
#include "test_util.h"

#include <catch2/catch.hpp>

using namespace quant_test;

namespace {

/// A (rows, cols) f32 tensor of zeros with some entries set.
HostTensor
sparse_f32(int64_t rows, int64_t cols,
           std::initializer_list<std::tuple<int64_t, int64_t, float>> entries) {
  std::vector<float> v(static_cast<size_t>(rows * cols), 0.0f);
  for (auto [i, j, x] : entries)
    v[i * cols + j] = x;
  return f32(rows, cols, v);
}

} // namespace

TEST_CASE("per_token_cast e4m3: hand-computed codes and scales",
          "[ref][quant]") {
  // Row 0: group 0 has amax 448 (sf = 1), group 1 amax 3.
  // Row 1: all zeros (amax clamps to 1e-4).
  HostTensor x = sparse_f32(2, 32,
                            {{0, 0, 448.0f},
                             {0, 1, -224.0f},
                             {0, 2, 1.0f},
                             {0, 3, 0.5f},
                             {0, 16, 3.0f},
                             {0, 17, 1.5f},
                             {0, 18, -0.75f}});
  SECTION("not rounded: sf = amax / 448, sf_inv = 448 / amax") {
    QuantTensor q = per_token_cast_ref(x, "e4m3", 16);
    CHECK(q.data.dtype() == DType::e4m3);
    CHECK(q.data.shape() == shape_t{2, 32});
    CHECK(q.sf.dtype() == DType::f32);
    CHECK(q.sf.strides() == shape_t{2, 1});
    CHECK(byte_at(q.data, 0, 0) == 0x7E); // 448
    CHECK(byte_at(q.data, 0, 1) == 0xF6); // -224 = -1.75 * 2^7
    CHECK(byte_at(q.data, 0, 2) == 0x38); // 1
    CHECK(byte_at(q.data, 0, 3) == 0x30); // 0.5
    CHECK(get(q.sf, 0, 0) == 1.0f);
    // 3 * fl(448/3) = 447.99998 -> 448; 1.5 * 149.33333 = 223.99999 -> 224.
    CHECK(get(q.sf, 0, 1) == static_cast<float>(3.0 / 448.0));
    CHECK(byte_at(q.data, 0, 16) == 0x7E);
    CHECK(byte_at(q.data, 0, 17) == 0x76);
    CHECK(byte_at(q.data, 0, 18) == 0xEE); // -112 = -1.75 * 2^6
    CHECK(byte_at(q.data, 0, 19) == 0x00);
    CHECK(get(q.sf, 1, 0) == 1e-4f / 448.0f);
    CHECK(byte_at(q.data, 1, 5) == 0x00);
  }
  SECTION("rounded: sf = 2^-7, sf_inv = 128 for amax 3") {
    QuantTensor q = per_token_cast_ref(x, "e4m3", 16, {}, false, true);
    CHECK(get(q.sf, 0, 1) == std::ldexp(1.0f, -7));
    CHECK(byte_at(q.data, 0, 16) == 0x7C); // 384 = 1.5 * 2^8
    CHECK(byte_at(q.data, 0, 17) == 0x74); // 192 = 1.5 * 2^7
    CHECK(byte_at(q.data, 0, 18) == 0xEC); // -96 = -1.5 * 2^6
    CHECK(get(q.sf, 1, 1) == std::ldexp(1.0f, -22));
  }
}

TEST_CASE("per_token_cast: a partial last group takes amax over its real "
          "channels (K = 576, bk = 128)",
          "[ref][quant]") {
  HostTensor x = sparse_f32(3, 576,
                            {{0, 511, 1.0f},
                             {0, 512, 100.0f},
                             {0, 575, 2.0f},
                             {1, 575, -7.0f},
                             {2, 0, 5.0f}});
  QuantTensor q = per_token_cast_ref(x, "e4m3", 128);
  REQUIRE(q.sf.shape() == shape_t{3, 5});
  CHECK(get(q.sf, 0, 3) == 1.0f / 448.0f); // 100 at column 512 not included
  CHECK(get(q.sf, 0, 4) == 100.0f / 448.0f);
  CHECK(get(q.sf, 1, 4) == 7.0f / 448.0f);
  CHECK(byte_at(q.data, 1, 575) == 0xFE); // -448
  CHECK(get(q.sf, 2, 4) == 1e-4f / 448.0f);
  // bk == K: one group per row, K % 64 == 0.
  QuantTensor whole = per_token_cast_ref(x, "e4m3", 576);
  REQUIRE(whole.sf.shape() == shape_t{3, 1});
  CHECK(get(whole.sf, 0, 0) == 100.0f / 448.0f);
}

TEST_CASE("per_token_cast: M = 0 gives empty outputs of the right dtypes "
          "and shapes",
          "[ref][quant]") {
  HostTensor x = HostTensor::zeros(DType::bf16, {0, 320});
  QuantTensor a = per_token_cast_ref(x, "e4m3", 64);
  CHECK(a.data.dtype() == DType::e4m3);
  CHECK(a.data.shape() == shape_t{0, 320});
  CHECK(a.sf.dtype() == DType::f32);
  CHECK(a.sf.shape() == shape_t{0, 5});
  QuantTensor b = per_token_cast_ref(x, "e2m1", 64, {}, true, true, true);
  CHECK(b.data.dtype() == DType::i8);
  CHECK(b.data.shape() == shape_t{0, 160});
  CHECK(b.sf.dtype() == DType::i32);
  CHECK(b.sf.shape() == shape_t{0, 2});
  QuantTensor c = per_token_cast_ref(x, "e4m3", 320, {}, true, true);
  CHECK(c.sf.shape() == shape_t{0, 1});
  CHECK(c.sf.dtype() == DType::f32);
  QuantTensor e = per_token_cast_ref(x, "e5m6", 320);
  CHECK(e.data.dtype() == DType::u8);
  CHECK(e.data.shape() == shape_t{0, 480});
  CHECK(e.sf.shape() == shape_t{0, 1});
  CHECK(per_token_cast_with_sf_only_ref(x, "e4m3", 64).shape() ==
        shape_t{0, 5});
  HostTensor sf = HostTensor::zeros(DType::f32, {0, 5});
  CHECK(per_token_cast_with_precomputed_sf_ref(x, "e2m1", 64, sf).shape() ==
        shape_t{0, 160});
  // A QuantTensor input with no rows.
  QuantTensor in{HostTensor::zeros(DType::e4m3, {0, 256}),
                 alloc_sf(0, 2, SfLayout::row_major)};
  QuantTensor r = per_token_cast_ref(in, "e4m3", 128, BlockSize{128, 128});
  CHECK(r.data.shape() == shape_t{0, 256});
  CHECK(r.sf.shape() == shape_t{0, 2});
}

TEST_CASE("per_token_cast: packed UE8M0 holds four group bytes per int32, "
          "little-endian, column-major",
          "[ref][quant]") {
  // K = 160, bk = 32: five groups; group g of row m has amax 448 * 2^(g - m),
  // so sf = 2^(g - m) exactly and byte = 127 + g - m.
  const int64_t M = 3, K = 160;
  std::vector<float> v(M * K, 0.0f);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t g = 0; g < 5; ++g)
      v[m * K + g * 32 + 7] = std::ldexp(448.0f, static_cast<int>(g - m));
  HostTensor x = f32(M, K, v);
  QuantTensor q = per_token_cast_ref(x, "e4m3", 32, {}, true, true, true);
  REQUIRE(q.sf.dtype() == DType::i32);
  REQUIRE(q.sf.shape() == shape_t{3, 2});
  CHECK(q.sf.strides() == shape_t{1, 4});
  for (int64_t m = 0; m < M; ++m) {
    const uint32_t b = 127 - static_cast<uint32_t>(m);
    CHECK(static_cast<uint32_t>(q.sf.at<int32_t>({m, 0})) ==
          (b | (b + 1) << 8 | (b + 2) << 16 | (b + 3) << 24));
    // Bytes of groups >= nK are zero in the reference.
    CHECK(static_cast<uint32_t>(q.sf.at<int32_t>({m, 1})) == b + 4);
  }
  // Column-major float32 (not packed) holds the same scales.
  QuantTensor c = per_token_cast_ref(x, "e4m3", 32, {}, true, true);
  CHECK(c.sf.dtype() == DType::f32);
  CHECK(c.sf.strides() == shape_t{1, 4});
  CHECK(get(c.sf, 2, 4) == 4.0f);
  CHECK(get(c.sf, 1, 0) == 0.5f);
  CHECK(compare_exact(c.data, q.data) == "");
  // M = 5: the leading dimension is aligned to 4.
  HostTensor x5 = HostTensor::zeros(DType::f32, {5, 160});
  CHECK(per_token_cast_ref(x5, "e4m3", 32, {}, true, true, true).sf.strides() ==
        shape_t{1, 8});
}

TEST_CASE("per_token_cast e2m1: element 2j in the low nibble, RNE with "
          "saturation",
          "[ref][quant]") {
  // amax 6: sf = 6/6 = 1 and sf_inv = 6/6 = 1, so codes are the values'.
  HostTensor x = sparse_f32(2, 32,
                            {{0, 0, 0.5f},
                             {0, 1, 6.0f},
                             {0, 2, -1.0f},
                             {0, 3, 3.0f},
                             {0, 4, 0.25f},  // tie -> 0
                             {0, 5, 0.75f},  // tie -> 1.0 (code 2)
                             {0, 6, 5.0f},   // tie -> 4 (code 6)
                             {0, 7, 2.5f},   // tie -> 2 (code 4)
                             {0, 8, 3.5f},   // tie -> 4 (code 6)
                             {0, 9, -0.1f},  // -> -0 (code 8)
                             {0, 10, -6.0f}, // code 15
                             {1, 31, 0.0f}});
  QuantTensor q = per_token_cast_ref(x, "e2m1", 32);
  REQUIRE(q.data.dtype() == DType::i8);
  REQUIRE(q.data.shape() == shape_t{2, 16});
  CHECK(get(q.sf, 0, 0) == 1.0f);
  CHECK(byte_at(q.data, 0, 0) == 0x71);
  CHECK(byte_at(q.data, 0, 1) == 0x5A);
  CHECK(byte_at(q.data, 0, 2) == 0x20);
  CHECK(byte_at(q.data, 0, 3) == 0x46);
  CHECK(byte_at(q.data, 0, 4) == 0x86);
  CHECK(byte_at(q.data, 0, 5) == 0x0F);
  CHECK(byte_at(q.data, 0, 6) == 0x00);
  // An all-zero row: sf = 2^-126 (the e2m1 clamp-min 6 * 2^-126).
  CHECK(get(q.sf, 1, 0) == std::ldexp(1.0f, -126));
  // Rounded, packed: amax 6 gives sf = 1, byte 127.
  QuantTensor p = per_token_cast_ref(x, "e2m1", 32, {}, true, true, true);
  CHECK(static_cast<uint32_t>(p.sf.at<int32_t>({0, 0})) == 127);
  CHECK(static_cast<uint32_t>(p.sf.at<int32_t>({1, 0})) == 1);
  CHECK(compare_exact(p.data, q.data) == "");
}

TEST_CASE("per_token_cast: rows may be strided", "[ref][quant]") {
  const int64_t M = 5, K = 256;
  HostTensor wide = randn(DType::bf16, M, 2 * K, 11);
  const int64_t shape[] = {M, K}, strides[] = {2 * K, 1};
  HostTensor view = HostTensor::view(wide.raw(), DType::bf16, shape, strides);
  HostTensor dense = view.clone();
  for (int64_t bk : {32, 128, 256}) {
    QuantTensor a = per_token_cast_ref(view, "e4m3", bk, {}, false, true);
    QuantTensor b = per_token_cast_ref(dense, "e4m3", bk, {}, false, true);
    CHECK(compare_exact(a.data, b.data) == "");
    CHECK(compare_exact(a.sf, b.sf) == "");
  }
}

TEST_CASE("per_token_cast: sf-only and precomputed-sf variants",
          "[ref][quant]") {
  HostTensor x = randn(DType::f32, 9, 576, 3, 5.0f);
  for (const char *fmt : {"e4m3", "e2m1"}) {
    for (bool round : {false, true}) {
      QuantTensor q = per_token_cast_ref(x, fmt, 64, {}, false, round);
      CHECK(compare_exact(
                per_token_cast_with_sf_only_ref(x, fmt, 64, {}, false, round),
                q.sf) == "");
      HostTensor d = per_token_cast_with_precomputed_sf_ref(x, fmt, 64, q.sf);
      // sf_inv = 1 / sf: with power-of-two scales this is the full cast's
      // multiplier, so the data must be identical.
      if (round)
        CHECK(compare_exact(d, q.data) == "");
      // Element by element, from the spec's formula.
      for (int64_t i = 0; i < 9; ++i)
        for (int64_t j = 0; j < 576; j += 2) {
          const float inv = 1.0f / get(q.sf, i, j / 64);
          const uint8_t c0 = tilejit::ref::f32_to_e4m3(get(x, i, j) * inv);
          if (std::string(fmt) == "e4m3") {
            REQUIRE(byte_at(d, i, j) == c0);
          } else {
            const uint8_t lo = tilejit::ref::f32_to_e2m1(get(x, i, j) * inv);
            const uint8_t hi =
                tilejit::ref::f32_to_e2m1(get(x, i, j + 1) * inv);
            REQUIRE(byte_at(d, i, j / 2) == tilejit::ref::pack_e2m1x2(lo, hi));
          }
        }
      // The precomputed variant equals the ground truth cast(sf=...).
      CHECK(compare_exact(d, cast_ref(x, fmt, {1, 64}, q.sf).data) == "");
    }
  }
}

TEST_CASE("per_token_cast: precomputed E4M3 scales (2.1) are decoded",
          "[ref][quant]") {
  HostTensor x = randn(DType::f32, 9, 576, 4, 5.0f);
  for (const char *fmt : {"e4m3", "e2m1"}) {
    // The full cast's e4m3 scales given back: sf_inv = 1 / decoded sf is
    // the full cast's multiplier, so the data must be identical.
    QuantTensor q =
        per_token_cast_ref(x, fmt, 64, {}, false, false, false, true);
    REQUIRE(q.sf.dtype() == DType::e4m3);
    HostTensor d = per_token_cast_with_precomputed_sf_ref(x, fmt, 64, q.sf);
    CHECK(compare_exact(d, q.data) == "");
    // Element by element: an e4m3 code of 0x38 is 1.0, so sf_inv = 1.
    HostTensor ones = HostTensor::zeros(DType::e4m3, {9, 9});
    for (int64_t i = 0; i < ones.numel(); ++i)
      ones.data<uint8_t>()[i] = 0x38;
    HostTensor u = per_token_cast_with_precomputed_sf_ref(x, fmt, 64, ones);
    if (std::string(fmt) == "e4m3")
      for (int64_t j = 0; j < 576; ++j)
        REQUIRE(byte_at(u, 3, j) == tilejit::ref::f32_to_e4m3(get(x, 3, j)));
  }
}

TEST_CASE("per_token_cast: re-quantization of a QuantTensor", "[ref][quant]") {
  SECTION("power-of-two scales, hand-computed") {
    // data e4m3 (1, 128), input blocks (1, 32) with sf [2, 0.5, 1, 1];
    // output groups of 64 (bk == K would be the one-group-per-row mode,
    // which takes no QuantTensor).
    HostTensor data = HostTensor::zeros(DType::e4m3, {1, 128});
    data.at<uint8_t>({0, 0}) = 0x7E;  // 448 * 2 = 896
    data.at<uint8_t>({0, 1}) = 0x38;  // 1 * 2 = 2
    data.at<uint8_t>({0, 32}) = 0x7E; // 448 * 0.5 = 224
    data.at<uint8_t>({0, 64}) = 0x38; // 1 * 1, alone in group 1
    QuantTensor in{data, f32(1, 4, {2.0f, 0.5f, 1.0f, 1.0f})};
    QuantTensor q =
        per_token_cast_ref(in, "e4m3", 64, BlockSize{1, 32}, false, true);
    CHECK(get(q.sf, 0, 0) == 2.0f); // amax 896 -> sf 2
    CHECK(byte_at(q.data, 0, 0) == 0x7E);
    CHECK(byte_at(q.data, 0, 1) == 0x38);
    CHECK(byte_at(q.data, 0, 32) == 0x6E);          // 112 = 1.75 * 2^6
    CHECK(get(q.sf, 0, 1) == std::ldexp(1.0f, -8)); // amax 1 -> 2^-8
    CHECK(byte_at(q.data, 0, 64) == 0x78);          // 256 = 2^8
  }
  SECTION("non-power-of-two scales use (data * sf_in) * sf_inv") {
    // Search for a row (max code, element code, scale) where the kernel's
    // re-association data * (sf_in * sf_inv) gives another code, then check
    // the reference follows the reference order.
    bool found = false;
    for (int s = 1; s < 4000 && !found; ++s) {
      const float sf_in = 1.0f + 0.000731f * static_cast<float>(s);
      for (uint8_t top = 0x60; top < 0x7E && !found; ++top) {
        const float amax = tilejit::ref::e4m3_to_f32(top) * sf_in;
        const float sf_inv = get_sf_and_inv(amax, Fmt::e4m3, false).sf_inv;
        for (uint8_t c = 0x20; c < top && !found; ++c) {
          const float v = tilejit::ref::e4m3_to_f32(c);
          const uint8_t ref_order =
              tilejit::ref::f32_to_e4m3((v * sf_in) * sf_inv);
          const uint8_t kernel_order =
              tilejit::ref::f32_to_e4m3(v * (sf_in * sf_inv));
          if (ref_order == kernel_order)
            continue;
          found = true;
          HostTensor data = HostTensor::zeros(DType::e4m3, {1, 64});
          data.at<uint8_t>({0, 0}) = top;
          data.at<uint8_t>({0, 1}) = c;
          QuantTensor q =
              per_token_cast_ref(QuantTensor{data, f32(1, 2, {sf_in, 1.0f})},
                                 "e4m3", 32, BlockSize{1, 32});
          CHECK(byte_at(q.data, 0, 1) == ref_order);
          CHECK(get(q.sf, 0, 0) == amax / 448.0f);
        }
      }
    }
    REQUIRE(found);
  }
  SECTION("fp4 input with a packed UE8M0 input SF equals the cast of its "
          "dequantized values") {
    HostTensor x = randn(DType::bf16, 70, 256, 5, 3.0f);
    QuantTensor in = cast_ref(x, "e2m1", {32, 32}, {}, {}, true, true, true);
    REQUIRE(in.sf.dtype() == DType::i32);
    // Dequantize by hand from the raw bytes: raw[k/4, 4m + k%4].
    const int64_t ld_bytes = 4 * in.sf.stride(1);
    std::vector<float> deq(70 * 256);
    for (int64_t i = 0; i < 70; ++i)
      for (int64_t j = 0; j < 256; ++j) {
        const int64_t m = i / 32, k = j / 32;
        const auto b = static_cast<uint8_t>(
            in.sf.raw()[(k / 4) * ld_bytes + 4 * m + k % 4]);
        const uint8_t byte = byte_at(in.data, i, j / 2);
        const float v =
            tilejit::ref::e2m1_to_f32(j % 2 ? byte >> 4 : byte & 0xF);
        deq[i * 256 + j] = v * std::ldexp(1.0f, b - 127);
      }
    HostTensor expected_x = f32(70, 256, deq);
    for (int64_t bk : {32, 128}) {
      for (const char *fmt : {"e4m3", "e2m1"}) {
        QuantTensor a = per_token_cast_ref(in, fmt, bk, BlockSize{32, 32}, true,
                                           true, true);
        QuantTensor b =
            per_token_cast_ref(expected_x, fmt, bk, {}, true, true, true);
        CHECK(compare_exact(a.data, b.data) == "");
        CHECK(compare_exact(a.sf, b.sf) == "");
      }
    }
  }
}

TEST_CASE("per_token_cast then cast_back stays within the format's bound",
          "[ref][quant]") {
  // Bound per element (docs/references/quant.md): e4m3 2^-4 * max(|x|,
  // 2^-6 sf); e2m1 2^-2 * max(|x|, sf).
  const int64_t M = 7, K = 576;
  for (DType dtype : {DType::f32, DType::bf16}) {
    HostTensor x = randn(dtype, M, K, 21, 10.0f);
    for (const char *fmt : {"e4m3", "e2m1"}) {
      const Fmt f = std::string(fmt) == "e4m3" ? Fmt::e4m3 : Fmt::e2m1;
      for (int64_t bk : {32, 64, 128, 576}) {
        for (bool packed : {false, true}) {
          QuantTensor q =
              per_token_cast_ref(x, fmt, bk, {}, packed, true, packed);
          HostTensor back = per_token_cast_back_ref(q, "fp32", bk);
          double worst = 0;
          int64_t below = 0, equal = 0;
          for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < K; ++j) {
              const double xv = get(x, i, j), bv = get(back, i, j);
              const double sf = read_sf(q.sf, i, j / bk);
              const double err = std::fabs(bv - xv);
              REQUIRE(err <= error_bound(f, xv, sf));
              worst = std::max(worst, err / error_bound(f, xv, sf));
              below += bv < xv;
              equal += bv == xv;
            }
          // The bound is nearly attained, so it is not vacuous.
          CHECK(worst > 0.5);
          // check_bias: RNE is unbiased.
          const double n = static_cast<double>(M * K);
          const double ratio = (below + equal / 2.0) / n;
          CHECK(std::fabs(ratio - 0.5) < 10 / std::sqrt(n));
          const double diff = tilejit::ref::calc_diff(x, back);
          CHECK(diff < (f == Fmt::e4m3 ? 1e-3 : 2e-2));
        }
      }
    }
  }
}
