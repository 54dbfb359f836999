// stochastic_cast_ref.cpp - TileKernels 2.1's stochastic rounding (tk21_ops
// §2.2) as tilejit does it on sm_90a, which has no cvt.rs: the specified
// random words of a quad (a hash of its four f32 values and its index),
// 16 bits an element, and a software rounding step that rounds away from
// zero with probability (discarded fraction) to 2^-16 granularity.
#include "quant/detail.h"

#include "common/convert.h"

#include <bit>
#include <cmath>
#include <fmt/format.h>

namespace tilejit::quant {

StochasticWords stochastic_words(const float v[4], uint32_t quad) {
  uint32_t h = std::bit_cast<uint32_t>(v[0]) * 0x5671D42Bu +
               std::bit_cast<uint32_t>(v[1]) * 0x9995E499u +
               std::bit_cast<uint32_t>(v[2]) * 0xACE1B8A5u +
               std::bit_cast<uint32_t>(v[3]) * 0xE153538Du + quad;
  h ^= h >> 23;
  h *= 0x7FEB352Du;
  h ^= h >> 16;
  uint32_t r0 = h * 0x846CA68Bu, r1 = h * 0xD35A2D97u;
  r0 ^= r0 >> 11;
  r1 ^= r1 >> 11;
  return {r0, r1};
}

uint16_t stochastic_bits(StochasticWords w, int element) {
  const uint32_t word = element < 2 ? w.r0 : w.r1;
  return static_cast<uint16_t>(element % 2 == 0 ? word & 0xffffu : word >> 16);
}

uint16_t stochastic_bf16(float v, uint16_t r) {
  const uint32_t bits = std::bit_cast<uint32_t>(v);
  if (std::isnan(v))
    return static_cast<uint16_t>((bits >> 16) | 0x40u); // quiet, sign kept
  const auto upper = static_cast<uint16_t>(bits >> 16);
  return static_cast<uint16_t>(upper + (r < (bits & 0xffffu) ? 1 : 0));
}

/// The code of the magnitude at or below a >= 0 on a grid of `gap` (a
/// power of two; `encode` exact there), or the next code (codes are ordered)
/// when r is below the discarded fraction (a - low) / gap, exact, to 16
/// bits, truncated.
static uint8_t step(float a, float gap, uint8_t (*encode)(float), uint16_t r) {
  const float units = std::floor(a / gap); // exact: a power-of-two scaling
  const float low = units * gap;
  const auto fraction = static_cast<uint32_t>(std::ldexp((a - low) / gap, 16));
  return static_cast<uint8_t>(encode(low) + (r < fraction ? 1 : 0));
}

uint8_t stochastic_e4m3(float v, uint16_t r) {
  if (std::isnan(v))
    return 0x7f;
  const uint8_t sign = std::signbit(v) ? 0x80 : 0x00;
  const float a = std::fabs(v);
  if (a >= 448.0f)
    return sign | 0x7e; // satfinite
  // The e4m3 magnitude at or below a (toward zero), and the gap to the
  // next: 2^-9 among subnormals (a < 2^-6), else 2^(e - 3).
  int e = 0;
  (void)std::frexp(a, &e); // a = f x 2^e, f in [0.5, 1)
  const int exponent = a < 0x1p-6f ? -6 : e - 1;
  return sign | step(a, std::ldexp(1.0f, exponent - 3), ref::f32_to_e4m3, r);
}

uint8_t stochastic_e2m1(float v, uint16_t r) {
  const uint8_t sign = std::signbit(v) ? 0x8 : 0x0;
  if (std::isnan(v))
    return sign | 0x7; // as the torch encoder: +-6
  const float a = std::fabs(v);
  if (a >= 6.0f)
    return sign | 0x7; // satfinite
  // The magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6: steps of 0.5 below 2, of 1
  // below 4, then 2.
  const float gap = a < 2.0f ? 0.5f : a < 4.0f ? 1.0f : 2.0f;
  return sign | step(a, gap, ref::f32_to_e2m1, r);
}

HostTensor stochastic_cast_ref(const HostTensor &x, DType dtype) {
  constexpr std::string_view fn = "stochastic_cast_ref";
  detail::check_contiguous(fn, "x", x);
  const DType in = x.dtype();
  if (!((in == DType::f32 && (dtype == DType::bf16 || dtype == DType::e4m3)) ||
        (in == DType::bf16 && dtype == DType::e4m3)))
    detail::fail(fn, fmt::format("argument 'x' has dtype {} to {}; "
                                 "stochastic rounding requires f32 to bf16, "
                                 "f32 to e4m3 or bf16 to e4m3",
                                 name_of(in), name_of(dtype)));
  const int64_t n = x.numel();
  if (n % 4 != 0)
    detail::fail(fn, fmt::format("argument 'x' has {} elements; stochastic "
                                 "rounding requires a multiple of 4",
                                 n));
  HostTensor y = HostTensor::zeros(dtype, x.shape());
  auto value = [&](int64_t i) {
    return in == DType::f32 ? x.data<float>()[i]
                            : ref::bf16_to_f32(x.data<uint16_t>()[i]);
  };
  for (int64_t q = 0; q < n / 4; ++q) {
    const float v[4] = {value(4 * q), value(4 * q + 1), value(4 * q + 2),
                        value(4 * q + 3)};
    const StochasticWords w = stochastic_words(v, static_cast<uint32_t>(q));
    for (int j = 0; j < 4; ++j) {
      const uint16_t r = stochastic_bits(w, j);
      if (dtype == DType::bf16)
        y.data<uint16_t>()[4 * q + j] = stochastic_bf16(v[j], r);
      else
        y.data<uint8_t>()[4 * q + j] = stochastic_e4m3(v[j], r);
    }
  }
  return y;
}

} // namespace tilejit::quant
