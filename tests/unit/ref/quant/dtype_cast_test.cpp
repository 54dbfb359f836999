// dtype_cast_test.cpp - dtype_cast_ref (TileKernels 2.1's quant.cast): hand
// cases of each conversion's rounding and saturation, and the round trips
// that must be exact.
#include "test_util.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

using namespace quant_test;

namespace {

HostTensor f32_values(const std::vector<float> &v) {
  const int64_t shape[] = {static_cast<int64_t>(v.size())};
  return HostTensor::from(DType::f32, shape, v);
}

} // namespace

TEST_CASE("dtype_cast_ref rounds f32 to bf16 to nearest even", "[ref][quant]") {
  const float tie_down = 1.0f + std::ldexp(1.0f, -8);   // halfway, even below
  const float tie_up = 1.0f + 3 * std::ldexp(1.0f, -8); // halfway, even above
  HostTensor out =
      dtype_cast_ref(f32_values({tie_down, tie_up, -2.5f}), DType::bf16);
  CHECK(out.dtype() == DType::bf16);
  CHECK(tilejit::ref::bf16_to_f32(out.data<uint16_t>()[0]) == 1.0f);
  CHECK(tilejit::ref::bf16_to_f32(out.data<uint16_t>()[1]) ==
        1.0f + std::ldexp(1.0f, -6));
  CHECK(tilejit::ref::bf16_to_f32(out.data<uint16_t>()[2]) == -2.5f);
}

TEST_CASE("dtype_cast_ref saturates e4m3 and keeps NaN", "[ref][quant]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  HostTensor out = dtype_cast_ref(
      f32_values({1000.0f, -1000.0f, 448.0f, 0.3f, nan}), DType::e4m3);
  const uint8_t *q = out.data<uint8_t>();
  CHECK(tilejit::ref::e4m3_to_f32(q[0]) == 448.0f);
  CHECK(tilejit::ref::e4m3_to_f32(q[1]) == -448.0f);
  CHECK(tilejit::ref::e4m3_to_f32(q[2]) == 448.0f);
  CHECK(tilejit::ref::e4m3_to_f32(q[3]) == 0.3125f); // 0.3 -> 1.25 x 2^-2
  CHECK(std::isnan(tilejit::ref::e4m3_to_f32(q[4])));
}

TEST_CASE("dtype_cast_ref widens exactly and every e4m3 code round-trips",
          "[ref][quant]") {
  std::vector<uint8_t> codes;
  for (int c = 0; c < 256; ++c)
    if ((c & 0x7F) != 0x7F) // not NaN
      codes.push_back(static_cast<uint8_t>(c));
  const int64_t shape[] = {static_cast<int64_t>(codes.size())};
  HostTensor e4m3 = HostTensor::from(DType::e4m3, shape, codes);
  for (DType wide : {DType::f32, DType::bf16}) {
    HostTensor w = dtype_cast_ref(e4m3, wide);
    HostTensor back = dtype_cast_ref(w, DType::e4m3);
    for (size_t i = 0; i < codes.size(); ++i) {
      INFO("code " << int(codes[i]) << " through " << name_of(wide));
      CHECK(back.data<uint8_t>()[i] == codes[i]);
    }
  }
  // bf16 -> f32 -> bf16 is the identity on every finite bf16.
  std::vector<uint16_t> bits;
  for (uint32_t b = 0; b < 0x10000; b += 7)
    if ((b & 0x7F80) != 0x7F80)
      bits.push_back(static_cast<uint16_t>(b));
  const int64_t n[] = {static_cast<int64_t>(bits.size())};
  HostTensor bf = HostTensor::from(DType::bf16, n, bits);
  HostTensor round =
      dtype_cast_ref(dtype_cast_ref(bf, DType::f32), DType::bf16);
  CHECK(std::equal(bits.begin(), bits.end(), round.data<uint16_t>()));
}

TEST_CASE("dtype_cast_ref names a dtype it does not take", "[ref][quant]") {
  HostTensor x = f32_values({1.0f});
  CHECK_THROWS_WITH(dtype_cast_ref(x, DType::i32),
                    Catch::Contains("argument 'dtype' is i32; requires f32, "
                                    "bf16 or e4m3"));
}
