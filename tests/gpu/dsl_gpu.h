// dsl_gpu.h - What the DSL GPU tests share: a block's tile, random rows and
// a launch of one block per group of rows.
#pragma once

#include "common/jit.h"

#include "tilejit/runtime/launch.h"
#include "tilejit/runtime/stream.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace tilejit::dsl_gpu {

constexpr int kRows = 16, kCols = 64; // a block's tile

/// rows x kCols floats drawn uniformly from [lo, hi) with Catch's seed.
inline std::vector<float> uniform_rows(int64_t rows, float lo, float hi) {
  std::mt19937_64 gen(Catch::rngSeed());
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> x(rows * kCols);
  for (float &v : x)
    v = dist(gen);
  return x;
}

/// n small integers in [-4, 4] (exact in every operand type and in f32
/// sums), or, without `integers`, floats in [-1, 1), from Catch's seed +
/// `salt`.
inline std::vector<float> test_values(int64_t n, bool integers, uint64_t salt) {
  std::mt19937_64 gen(Catch::rngSeed() + salt);
  std::uniform_int_distribution<int> small(-4, 4);
  std::uniform_real_distribution<float> real(-1, 1);
  std::vector<float> v(n);
  for (float &x : v)
    x = integers ? static_cast<float>(small(gen)) : real(gen);
  return v;
}

/// The value a tf32 MMA multiplies: the low 13 mantissa bits dropped.
inline float as_tf32(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  bits &= 0xffffe000u;
  std::memcpy(&v, &bits, 4);
  return v;
}

/// An MMA's dot product on the CPU: sum over k of tf32(a[k]) tf32(b[k]) in
/// double (`sum`, to which a caller may add a start value) and the sum of
/// the terms' magnitudes.
struct Tf32Dot {
  double sum = 0, magnitude = 0;
  /// Integers: exact. tf32: f32 accumulation in some order.
  bool matches(float got, bool tf32) const {
    const double tolerance = tf32 ? 1e-6 * magnitude + 1e-6 : 0.0;
    return std::fabs(got - sum) <= tolerance;
  }
};
inline Tf32Dot tf32_dot(const float *a, const float *b, int64_t k) {
  Tf32Dot d;
  for (int64_t i = 0; i < k; ++i) {
    const double term = static_cast<double>(as_tf32(a[i])) * as_tf32(b[i]);
    d.sum += term;
    d.magnitude += std::fabs(term);
  }
  return d;
}

/// Launches `kernel` on a grid of one block per `block_rows` rows,
/// `threads` a block (and the dynamic shared memory it reports), with the
/// arguments `push` packs, and waits for it.
template <class Fn>
void launch_rows(const ops::LoadedKernel &kernel, int64_t rows, Fn &&push,
                 unsigned threads = 256, int64_t block_rows = kRows) {
  rt::ArgPack args;
  push(args);
  rt::LaunchConfig config;
  config.grid = {static_cast<uint32_t>((rows + block_rows - 1) / block_rows), 1,
                 1};
  config.block = {threads, 1, 1};
  config.shared_bytes = static_cast<uint32_t>(kernel.abi.shared_bytes);
  rt::launch(kernel.function, config, args.data());
  rt::synchronize(nullptr);
}

} // namespace tilejit::dsl_gpu
