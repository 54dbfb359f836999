// stochastic_dsl.h - TileKernels 2.1's stochastic rounding (tk21_ops §2.2)
// in the tile DSL, as sm_90a has no cvt.rs: the quads' random bits (the
// specified hash) and software rounding steps to bf16, e4m3 and e2m1, the
// references' rules (stochastic_cast_ref.cpp). For cast and per_token_cast.
#pragma once

#include "tilejit/compiler/dsl.h"

#include <cmath>
#include <vector>

namespace tilejit::quant {

inline dsl::Value u32(dsl::KernelBuilder &k, int64_t v) {
  return k.constant(v, DType::u32);
}

/// §2.2's random bits of each element of f32 quads `q` of `shape` (..., n,
/// 4), quad i of the last-but-one dimension having index first + i: h = the
/// sum of bits(v_j) x C_j + quad, mixed; r0 = h x 0x846CA68B, r1 = h x
/// 0xD35A2D97, each r ^= r >> 11; element j takes the low (j even) or high
/// 16 bits of r0 (j < 2) or r1.
inline dsl::Value random_bits(dsl::KernelBuilder &k, dsl::Value q,
                              dsl::Value first,
                              const std::vector<int64_t> &shape) {
  const int last = static_cast<int>(shape.size()) - 1;
  auto j = k.iota(shape, last, DType::u32);
  auto is = [&](int64_t n) { return k.eq(j, u32(k, n)); };
  auto c = k.select(
      is(0), u32(k, 0x5671D42B),
      k.select(is(1), u32(k, 0x9995E499),
               k.select(is(2), u32(k, 0xACE1B8A5), u32(k, 0xE153538D))));
  // The quad's index joins element 0's term (u32 arithmetic wraps).
  auto quad = k.iota(shape, last - 1, DType::u32) + k.cast(first, DType::u32);
  auto term = k.bitcast(q, DType::u32) * c + k.select(is(0), quad, u32(k, 0));
  auto h = k.reduce_sum(term, last);
  h = k.bit_xor(h, h >> u32(k, 23));
  h = h * u32(k, 0x7FEB352D);
  h = k.bit_xor(h, h >> u32(k, 16));
  auto r0 = h * u32(k, 0x846CA68B), r1 = h * u32(k, 0xD35A2D97);
  r0 = k.bit_xor(r0, r0 >> u32(k, 11));
  r1 = k.bit_xor(r1, r1 >> u32(k, 11));
  auto word = k.select(k.lt(j, u32(k, 2)), k.broadcast(r0, shape),
                       k.broadcast(r1, shape));
  auto odd = k.bit_and(j, u32(k, 1));
  return k.select(k.eq(odd, u32(k, 0)), k.bit_and(word, u32(k, 0xffff)),
                  word >> u32(k, 16));
}

/// bf16 with random bits r: the upper half of the f32 bits, plus 1 where r
/// is below the lower half (truncation, then a carry away from zero).
inline dsl::Value round_bf16(dsl::KernelBuilder &k, dsl::Value v,
                             dsl::Value r) {
  auto bits = k.bitcast(v, DType::u32);
  auto low = k.bit_and(bits, u32(k, 0xffff));
  auto up = k.select(k.lt(r, low), u32(k, 1 << 16), u32(k, 0));
  auto rounded = k.bit_and(bits, u32(k, 0xffff0000)) + up;
  return k.cast(k.bitcast(rounded, DType::f32), DType::bf16);
}

/// The u32 code of the magnitude of f32 bits `bits` (sign clear) rounded
/// stochastically in a format of `m` mantissa bits whose smallest normal
/// exponent is `emin` (its gap 2^(e - m) among normals, 2^(emin - m)
/// below): the code at or below the magnitude, plus one (codes are
/// ordered) where r is below the discarded fraction truncated to 16 bits
/// (the references' step). From the bits alone: F, whose top bits are the
/// code and low 16 bits the fraction, is
///
///   (bits - (x0 - 1) << 23) >> (7 - m)         among normals (x >= x0),
///   M >> (x0 + 7 - m - x)                      below,
///
/// x the exponent field, x0 = 127 + emin, M the 24-bit significand (the
/// shift at most 31: M < 2^24, and f32 subnormals give 0 as the
/// references' floor does); the code is (F + 0xFFFF - r) >> 16, the carry
/// out of the fraction being r < fraction. Codes past the format's largest
/// are the caller's to saturate. Equal to the references' stochastic_e4m3
/// and stochastic_e2m1 on every f32 (checked on the CPU, session 66).
/// Fewer integer operations than session 65's form (cast bf16 -> e4m3:
/// 743 -> 671 PTX instructions) but the same times on an H100 (88.4 us
/// against 87.7, per_token_cast 101.1 against 100.3, one process): these
/// operations are not what holds the stochastic casts at 60-68 % of copy
/// (f32 to e4m3, with more bytes an element, reads 97 %).
///
/// `convert` (session 68; the casts' default, GPU cases pass on an H100,
/// the cast bf16 -> e4m3 88.2 -> 68.8 us): below the normals F is the
/// magnitude times 2^(16 + m - emin), truncated by the
/// float-to-integer conversion (below 2^emin it is under 2^(16 + m), exact
/// in f32, and the conversion truncates: F = floor), a multiply on the FMA
/// pipe and a conversion on the XU pipe for the five integer operations of
/// the significand's shift: the cast bf16 -> e4m3 spends 21 of its 26 SASS
/// instructions an element on the integer (ALU) pipe, which bounds it
/// (session 67). The conversion's result is used only below 2^emin (the
/// select), where it is in range. Equal to the references on every f32 x
/// 3 r and every bf16 x every r, e4m3 and e2m1 (checked on the CPU,
/// session 68).
inline dsl::Value step(dsl::KernelBuilder &k, dsl::Value bits, int64_t m,
                       int64_t emin, dsl::Value r, bool convert = false) {
  const int64_t x0 = 127 + emin;
  auto normal = (bits - u32(k, (x0 - 1) << 23)) >> u32(k, 7 - m);
  dsl::Value below;
  if (convert) {
    auto scaled = k.bitcast(bits, DType::f32) *
                  k.constant(std::ldexp(1.0, 16 + m - emin), DType::f32);
    below = k.bitcast(k.cast(scaled, DType::i32), DType::u32);
  } else {
    auto x = bits >> u32(k, 23);
    auto significand =
        k.bit_or(k.bit_and(bits, u32(k, 0x7fffff)), u32(k, 0x800000));
    auto shift = k.min(u32(k, x0 + 7 - m) - x, u32(k, 31));
    below = significand >> shift;
  }
  auto f = k.select(k.ge(bits, u32(k, x0 << 23)), normal, below);
  return (f + (u32(k, 0xffff) - r)) >> u32(k, 16);
}

/// e4m3 with random bits r: the magnitude at or below |v| (steps of 2^-9
/// below 2^-6, else 2^(e - 3)) and the next one with probability of the
/// discarded fraction, truncated to 16 bits; +-448 past it, NaN as 0x7f.
inline dsl::Value round_e4m3(dsl::KernelBuilder &k, dsl::Value v, dsl::Value r,
                             bool convert = false) {
  auto bits = k.bitcast(v, DType::u32);
  auto a = k.bit_and(bits, u32(k, 0x7fffffff));
  // Past 448 (and +-inf) the step gives codes above 0x7e.
  auto code = k.min(step(k, a, 3, -6, r, convert), u32(k, 0x7e));
  auto sign = k.bit_and(bits >> u32(k, 24), u32(k, 0x80));
  code =
      k.select(k.gt(a, u32(k, 0x7f800000)), u32(k, 0x7f), k.bit_or(code, sign));
  return k.bitcast(k.cast(code, DType::u8), DType::e4m3);
}

/// An e2m1 code (u8, sign in bit 3) with random bits r: the magnitude of
/// 0, 0.5, 1, 1.5, 2, 3, 4, 6 at or below |v| and the next with probability
/// of the discarded fraction (to 16 bits, truncated); +-6 past 6 and for
/// NaN (stochastic_e2m1).
inline dsl::Value round_e2m1(dsl::KernelBuilder &k, dsl::Value v, dsl::Value r,
                             bool convert = false) {
  auto bits = k.bitcast(v, DType::u32);
  auto a = k.bit_and(bits, u32(k, 0x7fffffff));
  // Past 6, +-inf and NaN the step gives codes above 7.
  auto code = k.min(step(k, a, 1, 0, r, convert), u32(k, 7));
  auto sign = k.bit_and(bits >> u32(k, 28), u32(k, 0x8));
  return k.cast(k.bit_or(code, sign), DType::u8);
}

} // namespace tilejit::quant
