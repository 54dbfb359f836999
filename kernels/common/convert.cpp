// convert.cpp - Exact element conversions. Narrow formats are encoded by one
// generic routine: scale |v| to the format's quantum at its exponent, round
// (RNE or toward zero) in double, where every step is exact, then assemble
// the bits.
#include "common/convert.h"

#include <cmath>
#include <cstring>

namespace tilejit::ref {

uint32_t f32_to_bits(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  return bits;
}

namespace {

struct Format {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  double max_finite;
  bool has_inf;      // e5m2, fp16: all-ones exponent is inf/NaN
  bool has_nan;      // e2m1 has no NaN: NaN encodes as the largest value
  uint32_t nan_code; // magnitude code NaN encodes to
};

constexpr Format kE4M3{4, 3, 7, 448.0, false, true, 0x7F};
constexpr Format kE5M2{5, 2, 15, 57344.0, true, true, 0x7F};
constexpr Format kE2M1{2, 1, 1, 6.0, false, false, 0x7};
constexpr Format kF16{5, 10, 15, 65504.0, true, true, 0x7E00};

enum class Rounding { nearest_even, toward_zero };

/// Bits of `v` in format `f`; `saturate` clamps finite overflow (and inf) to
/// the largest finite value, else overflow gives inf (or NaN where the
/// format has no inf).
uint32_t encode(float v, const Format &f, Rounding rounding, bool saturate) {
  const int width = f.exponent_bits + f.mantissa_bits;
  const uint32_t sign = std::signbit(v) ? 1u << width : 0u;
  if (std::isnan(v))
    return sign | f.nan_code;
  const uint32_t inf_code = ((1u << f.exponent_bits) - 1) << f.mantissa_bits;
  const uint32_t max_code = [&] {
    // The largest finite value's code, found from max_finite.
    int e;
    double m = std::frexp(f.max_finite, &e); // max = m * 2^e, m in [0.5, 1)
    uint32_t exp_field = static_cast<uint32_t>(e - 1 + f.bias);
    uint32_t mant =
        static_cast<uint32_t>(std::ldexp(m * 2 - 1, f.mantissa_bits));
    return (exp_field << f.mantissa_bits) | mant;
  }();
  double a = std::fabs(static_cast<double>(v));
  if (std::isinf(a))
    return sign | (saturate || !f.has_inf ? max_code : inf_code);
  if (a == 0)
    return sign;
  const int min_exponent = 1 - f.bias; // of the smallest normal
  int e;
  std::frexp(a, &e);
  int exponent = std::max(e - 1, min_exponent);
  double quantum = std::ldexp(1.0, exponent - f.mantissa_bits);
  double q = a / quantum; // exact: a has 24 significant bits
  q = rounding == Rounding::nearest_even ? std::nearbyint(q) : std::trunc(q);
  double value = q * quantum;
  if (value > f.max_finite) {
    if (saturate || rounding == Rounding::toward_zero)
      return sign | max_code;
    return sign | (f.has_inf ? inf_code : f.nan_code);
  }
  if (value == 0)
    return sign;
  if (value < std::ldexp(1.0, min_exponent)) // subnormal
    return sign | static_cast<uint32_t>(
                      value / std::ldexp(1.0, min_exponent - f.mantissa_bits));
  std::frexp(value, &e); // rounding may have carried into the next binade
  uint32_t exp_field = static_cast<uint32_t>(e - 1 + f.bias);
  uint32_t mant =
      static_cast<uint32_t>(std::ldexp(value, f.mantissa_bits - (e - 1)) -
                            std::ldexp(1.0, f.mantissa_bits));
  return sign | (exp_field << f.mantissa_bits) | mant;
}

double decode(uint32_t bits, const Format &f) {
  const int width = f.exponent_bits + f.mantissa_bits;
  const bool negative = (bits >> width) & 1;
  const uint32_t exp_field =
      (bits >> f.mantissa_bits) & ((1u << f.exponent_bits) - 1);
  const uint32_t mant = bits & ((1u << f.mantissa_bits) - 1);
  const uint32_t magnitude = bits & ((1u << width) - 1);
  double value;
  if (!f.has_inf && f.has_nan && magnitude == f.nan_code)
    value = std::nan("");
  else if (f.has_inf && exp_field == (1u << f.exponent_bits) - 1)
    value = mant ? std::nan("") : INFINITY;
  else if (exp_field == 0)
    value = std::ldexp(static_cast<double>(mant), 1 - f.bias - f.mantissa_bits);
  else
    value = std::ldexp(
        1.0 + std::ldexp(static_cast<double>(mant), -f.mantissa_bits),
        static_cast<int>(exp_field) - f.bias);
  return negative ? -value : value;
}

} // namespace

uint16_t f32_to_bf16(float v) {
  uint32_t bits = f32_to_bits(v);
  if (std::isnan(v))
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  uint32_t rounding = 0x7FFF + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

uint16_t f32_to_f16(float v) {
  return static_cast<uint16_t>(encode(v, kF16, Rounding::nearest_even, false));
}

uint16_t f32_to_f16_rz(float v) {
  if (std::isinf(v))
    return static_cast<uint16_t>(std::signbit(v) ? 0xFC00 : 0x7C00);
  return static_cast<uint16_t>(encode(v, kF16, Rounding::toward_zero, false));
}

float f16_to_f32(uint16_t bits) {
  return static_cast<float>(decode(bits, kF16));
}

uint8_t f32_to_e4m3(float v) {
  return static_cast<uint8_t>(encode(v, kE4M3, Rounding::nearest_even, true));
}

float e4m3_to_f32(uint8_t bits) {
  return static_cast<float>(decode(bits, kE4M3));
}

uint8_t f32_to_e5m2(float v, bool saturate) {
  return static_cast<uint8_t>(
      encode(v, kE5M2, Rounding::nearest_even, saturate));
}

float e5m2_to_f32(uint8_t bits) {
  return static_cast<float>(decode(bits, kE5M2));
}

uint8_t f32_to_e2m1(float v) {
  return static_cast<uint8_t>(encode(v, kE2M1, Rounding::nearest_even, true));
}

float e2m1_to_f32(uint8_t code) {
  return static_cast<float>(decode(code & 0xF, kE2M1));
}

float ue8m0_to_f32(uint8_t b) { return bits_to_f32(uint32_t{b} << 23); }

uint16_t f32_to_e5m6(float v) {
  // A NaN is fp16 0x7E00 whatever its sign and payload: the kernel's (the
  // H200's cvt.rz gives 0x7FFF for every NaN, clamped to 0x7E00), which
  // costs it one min a pair where the torch reference's 0x7E00 | sign
  // cost five instructions an element. The spec leaves NaN undefined.
  uint32_t code = (std::isnan(v) ? 0x7E00u : f32_to_f16_rz(v)) >> 4;
  uint32_t rem = f32_to_bits(v) & 0x1FFFF;
  if ((code & 1) + rem > 0x10000)
    code += 1;
  return static_cast<uint16_t>(code & 0xFFF);
}

float e5m6_to_f32(uint16_t code) {
  return f16_to_f32(static_cast<uint16_t>((code & 0xFFF) << 4));
}

void pack_e5m6(const uint16_t c[8], uint32_t w[3]) {
  auto k = [&](int i) { return static_cast<uint32_t>(c[i] & 0xFFF); };
  w[0] = k(0) << 20 | k(1) << 8 | k(2) >> 4;
  w[1] = (k(2) & 0xF) << 28 | k(3) << 16 | k(4) << 4 | k(5) >> 8;
  w[2] = (k(5) & 0xFF) << 24 | k(6) << 12 | k(7);
}

void unpack_e5m6(const uint32_t w[3], uint16_t c[8]) {
  auto code = [](uint32_t f16) {
    return static_cast<uint16_t>((f16 & 0xFFF0) >> 4);
  };
  c[0] = code(w[0] >> 16);
  c[1] = code(w[0] >> 4);
  c[2] = code((w[0] << 8) | (w[1] >> 24));
  c[3] = code(w[1] >> 12);
  c[4] = code(w[1]);
  c[5] = code((w[1] << 12) | (w[2] >> 20));
  c[6] = code(w[2] >> 8);
  c[7] = code(w[2] << 4);
}

} // namespace tilejit::ref
