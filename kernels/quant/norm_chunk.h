// norm_chunk.h - The columns the RMSNorm kernels (norm_forward,
// norm_backward) take of a row at a time.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>

namespace tilejit::quant {

/// The largest power of two from 1024 down to `smallest` that divides
/// `hidden`; else `hidden` rounded up to a power of two, clamped to
/// [smallest, 1024] (the last chunk partial).
inline int32_t norm_chunk(int32_t hidden, int32_t smallest) {
  for (int32_t c = 1024; c >= smallest; c /= 2)
    if (hidden % c == 0)
      return c;
  return std::clamp<int32_t>(
      static_cast<int32_t>(std::bit_ceil(static_cast<uint32_t>(hidden))),
      smallest, 1024);
}

} // namespace tilejit::quant
