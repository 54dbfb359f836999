// scale_dsl.h - §3.2 in the tile DSL: a block's scale from its absmax, for
// the quantizing kernels (per_token_cast, per_block_cast).
#pragma once

#include "tilejit/compiler/dsl.h"

#include <algorithm>

namespace tilejit::quant {

/// A format's largest value and the absmax clamp of §3.1: e4m3 448 and
/// 1e-4, e2m1 6 and 6 x 2^-126 (so that sf >= 2^-126), e5m6 65024 and 1e-4.
struct FmtLimits {
  double max;
  double clamp_min;
};
inline constexpr FmtLimits kE4m3Limits{448.0, 1e-4};
inline constexpr FmtLimits kE2m1Limits{6.0, 6.0 * 0x1p-126};
inline constexpr FmtLimits kE5m6Limits{65024.0, 1e-4};

/// A block's scale from its absmax: sf, 1 / sf and, with round_sf, the
/// biased exponent of sf (a power of two; the UE8M0 byte).
struct Scales {
  dsl::Value sf, sf_inv, biased;
};

/// sf = max(absmax, clamp) / max and sf_inv = max / max(absmax, clamp) (a
/// second IEEE division, not 1 / sf); with round_sf both rounded to the
/// power of two at or above sf.
inline Scales scales_of(dsl::KernelBuilder &k, dsl::Value absmax,
                        FmtLimits limits, bool round_sf) {
  auto amax = k.max(absmax, k.constant(limits.clamp_min, DType::f32));
  auto fmt_max = k.constant(limits.max, DType::f32);
  Scales s;
  s.sf = amax / fmt_max;
  s.sf_inv = fmt_max / amax;
  if (round_sf) {
    // The exponent of the power of two at or above sf: (bits + 2^23 - 1)
    // >> 23, which is ((bits - 1) >> 23) + 1 for sf > 0. Written with the
    // add first: a byte of `(..) + 1` was narrowed by LLVM to a 16-bit
    // add.s16x2 with an undefined lane, whose byte came out one low on the
    // H200 (packed scales, part of a word a store).
    auto exponent = k.constant(23, DType::u32);
    s.biased =
        (k.bitcast(s.sf, DType::u32) + k.constant((1 << 23) - 1, DType::u32)) >>
        exponent;
    s.sf = k.bitcast(s.biased << exponent, DType::f32);
    s.sf_inv = k.bitcast((k.constant(254, DType::u32) - s.biased) << exponent,
                         DType::f32);
  }
  return s;
}

/// TileKernels 2.1's E4M3 scales (use_e4m3_sf, tk21 §0.4(a)): sf =
/// e4m3(max(absmax, clamp) / max) as its decoded f32 (the clamp is
/// fmt_max x 2^-9 unless a caller says otherwise), sf_inv = 1 / sf (an
/// IEEE division by the decoded value). `biased` is not set.
inline Scales e4m3_scales_of(dsl::KernelBuilder &k, dsl::Value absmax,
                             FmtLimits limits) {
  auto amax = k.max(absmax, k.constant(limits.clamp_min, DType::f32));
  Scales s;
  s.sf = k.cast(k.cast(amax / k.constant(limits.max, DType::f32), DType::e4m3),
                DType::f32);
  s.sf_inv = k.constant(1, DType::f32) / s.sf;
  return s;
}

/// A format's limits with the E4M3 scales' clamp, fmt_max x 2^-9 (0.875 for
/// e4m3, 6 / 512 for e2m1).
inline FmtLimits e4m3_sf_limits(FmtLimits limits) {
  return {limits.max, limits.max / 512};
}

/// Stores a block's `rows` x `n` scales `sf` (f32, or the UE8M0 bytes of
/// packed scales) from scale `first` of row r0 on: into `out_sf`, an f32
/// (M, groups) in any strides, or with `packed` the bytes (M, words, 4) of
/// the int32 words, scale j of a row being byte j % 4 of word j / 4. Fewer
/// than 4 packed scales fill part of a word (n divides 4, first % n == 0);
/// more, whole words (n % 4 == 0, first % 4 == 0).
inline void store_scales(dsl::KernelBuilder &k, dsl::Value sf,
                         const dsl::Tensor &out_sf, dsl::Value r0,
                         dsl::Value first, int64_t rows, int64_t n,
                         bool packed) {
  if (!packed) {
    k.store(k.reshape(sf, {rows, n}), out_sf, {r0, first});
    return;
  }
  auto word = first / k.index(4);
  if (n >= 4)
    k.store(k.reshape(sf, {rows, n / 4, 4}), out_sf, {r0, word, k.index(0)});
  else
    k.store(k.reshape(sf, {rows, 1, n}), out_sf,
            {r0, word, first - word * k.index(4)});
}

/// sf_inv = 1 / sf (an IEEE division, §4.4) of the `rows` x `n` given
/// scales at (r0, c0), as (rows, n, 1). `sf` is the kernel's view of a
/// row-major f32 or e4m3 (M', nK) with a third dimension that repeats each
/// scale (stride 0; repeated_scales in scale_layout.h): a load of one element a
/// thread (relayout 1, so that this access without vectors leaves the
/// kernel's others theirs), taken back to one by a maximum over the copies,
/// which also gives it an absmax's layout.
inline dsl::Value precomputed_sf_inv(dsl::KernelBuilder &k,
                                     const dsl::Tensor &sf, dsl::Value r0,
                                     dsl::Value c0, int64_t rows, int64_t n,
                                     int64_t threads) {
  const int64_t copies = std::max<int64_t>(1, threads / (rows * n));
  auto repeated = k.relayout(
      k.cast(k.load(sf, {r0, c0, k.index(0)}, {rows, n, copies}), DType::f32),
      1);
  return k.constant(1, DType::f32) / k.reduce_max(repeated, 2);
}

} // namespace tilejit::quant
