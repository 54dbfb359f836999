// test_util.h - Helpers of the quant reference tests: tensors from values,
// seeded random inputs, element access and the round-trip error bound.
#pragma once

#include "common/convert.h"
#include "common/host_tensor.h"
#include "quant/reference.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace quant_test {

using tilejit::DType;
using tilejit::ref::HostTensor;
using namespace tilejit::quant;
using shape_t = std::vector<int64_t>;

inline HostTensor f32(int64_t rows, int64_t cols,
                      const std::vector<float> &values) {
  const int64_t shape[] = {rows, cols};
  return HostTensor::from(DType::f32, shape, values);
}

/// A bf16 tensor holding `values` rounded to bf16 (RNE).
inline HostTensor bf16(int64_t rows, int64_t cols,
                       const std::vector<float> &values) {
  std::vector<uint16_t> bits(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    bits[i] = tilejit::ref::f32_to_bf16(values[i]);
  const int64_t shape[] = {rows, cols};
  return HostTensor::from(DType::bf16, shape, bits);
}

/// Seeded normal values, `scale` * N(0, 1), as f32 or bf16 (M, K).
inline HostTensor randn(DType dtype, int64_t rows, int64_t cols, uint64_t seed,
                        float scale = 1.0f) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(rows * cols));
  for (float &x : v)
    x = scale * dist(rng);
  return dtype == DType::bf16 ? bf16(rows, cols, v) : f32(rows, cols, v);
}

/// Element (i, j) of any 2-D tensor as float (exact for the narrow types).
inline float get(const HostTensor &t, int64_t i, int64_t j) {
  const int64_t index[] = {i, j};
  return static_cast<float>(tilejit::ref::element_as_double(t, index));
}

inline uint8_t byte_at(const HostTensor &t, int64_t i, int64_t j) {
  return t.at<uint8_t>({i, j});
}

inline uint32_t bits(float v) { return tilejit::ref::f32_to_bits(v); }

/// Worst-case |dequantized - x| of one element for a format, derived in
/// docs/references/quant.md: RNE to the format gives a relative error of
/// 2^-(mantissa bits + 1) above the smallest normal and half a subnormal
/// quantum below it (E5M6: a whole quantum, by its rounding quirk); the
/// float32 products add a few units of 2^-24.
inline double error_bound(Fmt fmt, double x, double sf) {
  double rel = 0, floor_value = 0; // floor_value: min normal * sf
  switch (fmt) {
  case Fmt::e4m3:
    rel = std::ldexp(1.0, -4), floor_value = std::ldexp(sf, -6);
    break;
  case Fmt::e2m1:
    rel = std::ldexp(1.0, -2), floor_value = sf;
    break;
  case Fmt::e5m6:
    rel = std::ldexp(1.0, -7), floor_value = std::ldexp(sf, -13);
    break;
  }
  return rel * std::max(std::fabs(x), floor_value) * (1 + std::ldexp(1.0, -18));
}

} // namespace quant_test
