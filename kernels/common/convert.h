// convert.h - Exact element conversions between float32 and the narrow
// formats of the ops (shared/specs/quant_transpose.md §2): bf16, fp16, fp8
// e4m3/e5m2, fp4 e2m1, ue8m0 and E5M6. All float32 -> narrow conversions
// round to nearest, ties to even, unless the name says otherwise.
#pragma once

#include <bit>
#include <cstdint>

namespace tilejit::ref {

inline float bits_to_f32(uint32_t bits) { return std::bit_cast<float>(bits); }
uint32_t f32_to_bits(float v);

/// bf16: RNE; NaN stays NaN (quiet, sign kept).
uint16_t f32_to_bf16(float v);
/// Inline: the case comparisons decode whole tensors of bf16 through it.
inline float bf16_to_f32(uint16_t bits) {
  return bits_to_f32(uint32_t{bits} << 16);
}

/// fp16: RNE, overflow to +-inf, subnormals kept.
uint16_t f32_to_f16(float v);
/// fp16 rounded toward zero (CUDA __float2half_rz): magnitudes below 2^-24
/// become +-0, finite overflow becomes +-65504 (0x7BFF); inf and NaN stay.
uint16_t f32_to_f16_rz(float v);
float f16_to_f32(uint16_t bits);

/// fp8 e4m3 (float8_e4m3fn): RNE saturating to +-448 (CUDA __NV_SATFINITE);
/// NaN -> 0x7F / 0xFF by sign; tiny negatives -> -0 (0x80).
uint8_t f32_to_e4m3(float v);
float e4m3_to_f32(uint8_t bits);

/// fp8 e5m2: RNE; `saturate` clamps to +-57344, otherwise overflow is +-inf.
uint8_t f32_to_e5m2(float v, bool saturate = false);
float e5m2_to_f32(uint8_t bits);

/// fp4 e2m1, one 4-bit code in the low nibble: RNE saturating to +-6; sign
/// kept (-0 and tiny negatives -> 8); NaN -> 7 / 15 by sign.
uint8_t f32_to_e2m1(float v);
float e2m1_to_f32(uint8_t code);
/// Two codes in one byte: element 2j in the low nibble, 2j+1 in the high.
inline uint8_t pack_e2m1x2(uint8_t low, uint8_t high) {
  return static_cast<uint8_t>((low & 0xF) | ((high & 0xF) << 4));
}

/// ue8m0: byte b is the float32 with bit pattern b << 23 (b = 0 -> +0.0).
float ue8m0_to_f32(uint8_t b);

/// E5M6 12-bit code of one float32 (spec §2.4, bit-exact with the original,
/// including its rounding quirk for fp16-subnormal magnitudes). A NaN is
/// fp16 0x7E00 before the rounding, whatever its sign (code 0x7E0, or 0x7E1
/// when its 17 low bits exceed 0x10000): a NaN code, as the GPU kernel gives;
/// DeepSeek's torch reference keeps the sign, its kernel gives 0x7FF or
/// 0x800 (-0).
uint16_t f32_to_e5m6(float v);
/// Decodes a 12-bit code: (code << 4) read as fp16, exactly.
float e5m6_to_f32(uint16_t code);
/// 8 codes <-> 3 little-endian uint32 words (c0 most significant).
void pack_e5m6(const uint16_t codes[8], uint32_t words[3]);
void unpack_e5m6(const uint32_t words[3], uint16_t codes[8]);

} // namespace tilejit::ref
