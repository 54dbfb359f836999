// common_test.cpp - The shared scale-factor machinery (§3.1-§3.3): the
// worked examples of get_sf_and_inv, the three SF layouts' strides and byte
// positions, and the reading rules of SF inputs.
#include "test_util.h"

#include <bit>
#include <catch2/catch.hpp>
#include <cstring>

using namespace quant_test;

static_assert(std::endian::native == std::endian::little,
              "the byte-position tests assume a little-endian host");

TEST_CASE("format constants", "[ref][quant]") {
  CHECK(fmt_max(Fmt::e4m3) == 448.0f);
  CHECK(fmt_max(Fmt::e2m1) == 6.0f);
  CHECK(fmt_max(Fmt::e5m6) == 65024.0f);
  CHECK(default_clamp_min(Fmt::e4m3) == 1e-4f);
  CHECK(default_clamp_min(Fmt::e5m6) == 1e-4f);
  CHECK(default_clamp_min(Fmt::e2m1) == 6.0f * std::ldexp(1.0f, -126));
  // The fp32 value of 1e-4 that the spec quotes.
  CHECK(std::fabs(static_cast<double>(default_clamp_min(Fmt::e4m3)) -
                  9.99999974738e-05) < 1e-15);
}

TEST_CASE("get_sf_and_inv reproduces the worked examples of §3.2",
          "[ref][quant]") {
  SECTION("e4m3, amax = 3") {
    SfAndInv r = get_sf_and_inv(3.0f, Fmt::e4m3, true);
    CHECK(r.sf == std::ldexp(1.0f, -7));
    CHECK(r.sf_inv == 128.0f);
    CHECK(r.ue8m0 == 120);
    SfAndInv n = get_sf_and_inv(3.0f, Fmt::e4m3, false);
    CHECK(n.sf == static_cast<float>(3.0 / 448.0));
    CHECK(n.sf_inv == static_cast<float>(448.0 / 3.0));
    CHECK(std::fabs(n.sf_inv - 149.33333f) < 1e-4f);
  }
  SECTION("e4m3, amax = 0 clamps to 1e-4") {
    SfAndInv n = get_sf_and_inv(0.0f, Fmt::e4m3, false);
    CHECK(n.sf == static_cast<float>(static_cast<double>(1e-4f) / 448.0));
    CHECK(std::fabs(n.sf - 2.2321e-7f) < 1e-11f);
    SfAndInv r = get_sf_and_inv(0.0f, Fmt::e4m3, true);
    CHECK(r.sf == std::ldexp(1.0f, -22));
    CHECK(r.sf_inv == std::ldexp(1.0f, 22));
    CHECK(r.ue8m0 == 105);
  }
  SECTION("e2m1, amax = 0 gives exactly 2^-126") {
    for (bool round : {false, true}) {
      SfAndInv r = get_sf_and_inv(0.0f, Fmt::e2m1, round);
      CHECK(r.sf == std::ldexp(1.0f, -126));
      CHECK(r.sf_inv == std::ldexp(1.0f, 126));
    }
    CHECK(get_sf_and_inv(0.0f, Fmt::e2m1, true).ue8m0 == 1);
  }
  SECTION("e5m6, amax = 1") {
    SfAndInv r = get_sf_and_inv(1.0f, Fmt::e5m6, true);
    CHECK(r.sf == std::ldexp(1.0f, -15));
    CHECK(r.sf_inv == 32768.0f);
    CHECK(r.ue8m0 == 112);
    CHECK(get_sf_and_inv(1.0f, Fmt::e5m6, false).sf ==
          static_cast<float>(1.0 / 65024.0));
  }
  SECTION("a power-of-two sf stays; one ulp above it rounds up") {
    SfAndInv r = get_sf_and_inv(448.0f, Fmt::e4m3, true);
    CHECK(r.sf == 1.0f);
    CHECK(r.sf_inv == 1.0f);
    CHECK(r.ue8m0 == 127);
    r = get_sf_and_inv(std::nextafter(448.0f, 1e9f), Fmt::e4m3, true);
    CHECK(r.sf == 2.0f);
    CHECK(r.sf_inv == 0.5f);
    CHECK(r.ue8m0 == 128);
  }
  SECTION("a custom clamp-min replaces the default") {
    SfAndInv r = get_sf_and_inv(0.0f, Fmt::e4m3, false, 448.0f);
    CHECK(r.sf == 1.0f);
    CHECK(r.sf_inv == 1.0f);
    CHECK(get_sf_and_inv(2.0f, Fmt::e4m3, false, 1.0f).sf ==
          static_cast<float>(2.0 / 448.0));
  }
}

TEST_CASE("the non-rounded sf_inv is fmt_max / a, not 1 / sf", "[ref][quant]") {
  // Find amax values where the two differ, and check the reference uses the
  // second IEEE division.
  int differing = 0;
  for (int i = 1; i < 2000; ++i) {
    const float a = 0.37f * static_cast<float>(i);
    const float sf = a / 448.0f;
    const float via_reciprocal = 1.0f / sf;
    const float via_division = 448.0f / a;
    const SfAndInv r = get_sf_and_inv(a, Fmt::e4m3, false);
    CHECK(r.sf == sf);
    CHECK(r.sf_inv == via_division);
    differing += via_reciprocal != via_division;
  }
  CHECK(differing > 100);
}

TEST_CASE("rounded sf agrees with the reference's bit rule", "[ref][quant]") {
  // The reference rounds with (bits + 0x7FFFFF) & 0x7F800000 and takes
  // quant_sf = 1 / sf; the kernel's ((bits - 1) >> 23) + 1 form must agree.
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  std::uniform_int_distribution<int> expo(-60, 60);
  for (int i = 0; i < 20000; ++i) {
    const float amax = std::ldexp(mant(rng), expo(rng));
    for (Fmt f : {Fmt::e4m3, Fmt::e2m1, Fmt::e5m6}) {
      const float sf = std::max(amax, default_clamp_min(f)) / fmt_max(f);
      const float ref_sf =
          tilejit::ref::bits_to_f32((bits(sf) + 0x7FFFFFu) & 0x7F800000u);
      const SfAndInv r = get_sf_and_inv(amax, f, true);
      REQUIRE(r.sf == ref_sf);
      REQUIRE(r.sf_inv == 1.0f / ref_sf);
      REQUIRE(r.ue8m0 == bits(ref_sf) >> 23);
      REQUIRE(r.sf >= sf);
      REQUIRE(r.sf < 2 * sf);
    }
  }
}

TEST_CASE("alloc_sf returns the three layouts' dtypes, shapes and strides",
          "[ref][quant]") {
  HostTensor row = alloc_sf(5, 6, SfLayout::row_major);
  CHECK(row.dtype() == DType::f32);
  CHECK(row.shape() == shape_t{5, 6});
  CHECK(row.strides() == shape_t{6, 1});
  HostTensor col = alloc_sf(5, 6, SfLayout::col_major);
  CHECK(col.dtype() == DType::f32);
  CHECK(col.shape() == shape_t{5, 6});
  CHECK(col.strides() == shape_t{1, 8});
  HostTensor packed = alloc_sf(5, 6, SfLayout::packed_ue8m0);
  CHECK(packed.dtype() == DType::i32);
  CHECK(packed.shape() == shape_t{5, 2});
  CHECK(packed.strides() == shape_t{1, 8});
  CHECK(alloc_sf(4, 9, SfLayout::packed_ue8m0).strides() == shape_t{1, 4});
  CHECK(alloc_sf(4, 9, SfLayout::packed_ue8m0).shape() == shape_t{4, 3});
  CHECK(alloc_sf(0, 9, SfLayout::packed_ue8m0).shape() == shape_t{0, 3});
  CHECK(alloc_sf(0, 9, SfLayout::col_major).shape() == shape_t{0, 9});
  CHECK(sf_layout_of(false, false) == SfLayout::row_major);
  CHECK(sf_layout_of(true, false) == SfLayout::col_major);
  CHECK(sf_layout_of(true, true) == SfLayout::packed_ue8m0);
}

TEST_CASE("store_sf writes the documented memory positions", "[ref][quant]") {
  SECTION("column-major: the M' entries of one group are contiguous") {
    HostTensor sf = alloc_sf(5, 3, SfLayout::col_major);
    store_sf(sf, 2, 1, {0.25f, 4.0f, 0});
    float v;
    std::memcpy(&v, sf.raw() + (1 * 8 + 2) * 4, 4); // raw[k, m], ld 8
    CHECK(v == 0.25f);
    CHECK(read_sf(sf, 2, 1) == 0.25f);
  }
  SECTION("packed: byte k % 4 of int32 (m, k / 4), i.e. raw[k/4, 4m + k%4]") {
    HostTensor sf = alloc_sf(5, 6, SfLayout::packed_ue8m0);
    for (int64_t k = 0; k < 6; ++k)
      store_sf(sf, 2, k, {0.0f, 0.0f, static_cast<uint8_t>(120 + k)});
    CHECK(static_cast<uint32_t>(sf.at<int32_t>({2, 0})) == 0x7B7A7978u);
    CHECK(static_cast<uint32_t>(sf.at<int32_t>({2, 1})) == 0x00007D7Cu);
    const int64_t raw_row = 4 * 8; // bytes per raw row: align(4 M', 16)
    for (int64_t k = 0; k < 6; ++k)
      CHECK(static_cast<int>(sf.raw()[(k / 4) * raw_row + 4 * 2 + k % 4]) ==
            120 + k);
    CHECK(sf.at<int32_t>({1, 0}) == 0); // neighbours untouched
    CHECK(sf.at<int32_t>({3, 1}) == 0);
    CHECK(read_sf(sf, 2, 5) == std::ldexp(1.0f, 125 - 127));
    store_sf(sf, 2, 0, {0.0f, 0.0f, 0});
    CHECK(read_sf(sf, 2, 0) == 0.0f); // byte 0 decodes to +0.0
    CHECK(!std::signbit(read_sf(sf, 2, 0)));
    CHECK(read_sf(sf, 2, 1) == std::ldexp(1.0f, 121 - 127));
  }
}

TEST_CASE("SF inputs are classified by stride(0) == 1", "[ref][quant]") {
  constexpr const char *fn = "f";
  SECTION("accepted layouts") {
    CHECK_NOTHROW(
        check_sf_input(fn, "sf", alloc_sf(5, 6, SfLayout::row_major), 5, 6));
    CHECK_NOTHROW(
        check_sf_input(fn, "sf", alloc_sf(5, 6, SfLayout::col_major), 5, 6));
    CHECK_NOTHROW(
        check_sf_input(fn, "sf", alloc_sf(5, 6, SfLayout::packed_ue8m0), 5, 6));
    // A contiguous (M', 1) float32 is classed column-major; harmless.
    HostTensor one = f32(3, 1, {1.0f, 2.0f, 3.0f});
    CHECK(one.stride(0) == 1);
    CHECK_NOTHROW(check_sf_input(fn, "sf", one, 3, 1));
    CHECK(read_sf(one, 2, 0) == 3.0f);
  }
  SECTION("an int32 SF must be column-major") {
    HostTensor sf = HostTensor::zeros(DType::i32, {3, 2});
    CHECK_THROWS_WITH(check_sf_input(fn, "x.sf", sf, 3, 6),
                      "f: argument 'x.sf' is i32[3, 2] strides [2, 1]; "
                      "requires a float32 SF with stride(1) == 1 (row-major) "
                      "or stride(0) == 1 (column-major)");
  }
  SECTION("a column-major SF of another dtype") {
    const int64_t shape[] = {3, 2}, strides[] = {1, 4};
    HostTensor sf = HostTensor::zeros_strided(DType::u8, shape, strides);
    CHECK_THROWS_WITH(check_sf_input(fn, "x.sf", sf, 3, 2),
                      "f: argument 'x.sf' is column-major (stride(0) == 1) "
                      "with dtype u8; requires f32, or i32 (packed UE8M0)");
  }
  SECTION("neither stride is 1") {
    const int64_t shape[] = {3, 2}, strides[] = {4, 2};
    HostTensor sf = HostTensor::zeros_strided(DType::f32, shape, strides);
    CHECK_THROWS_WITH(check_sf_input(fn, "x.sf", sf, 3, 2),
                      "f: argument 'x.sf' is f32[3, 2] strides [4, 2]; "
                      "requires a float32 SF with stride(1) == 1 (row-major) "
                      "or stride(0) == 1 (column-major)");
  }
  SECTION("wrong shapes") {
    CHECK_THROWS_WITH(
        check_sf_input(fn, "x.sf", alloc_sf(5, 6, SfLayout::row_major), 5, 7),
        "f: argument 'x.sf' has shape [5, 6]; requires [5, 7]");
    CHECK_THROWS_WITH(check_sf_input(fn, "x.sf",
                                     alloc_sf(5, 4, SfLayout::packed_ue8m0), 5,
                                     5),
                      "f: argument 'x.sf' has shape [5, 1]; requires [5, 2] "
                      "(packed UE8M0 of 5 groups)");
    CHECK_THROWS_WITH(
        check_sf_input(fn, "x.sf", HostTensor::zeros(DType::f32, {5}), 5, 1),
        "f: argument 'x.sf' has shape [5]; requires a 2-D tensor");
  }
}

TEST_CASE("logical_cols of quantized data", "[ref][quant]") {
  CHECK(logical_cols(HostTensor::zeros(DType::e4m3, {2, 64})) == 64);
  CHECK(logical_cols(HostTensor::zeros(DType::i8, {2, 32})) == 64);
  CHECK(logical_cols(HostTensor::zeros(DType::u8, {2, 96})) == 64);
}
