// random_stream.h - Counter-seeded random numbers for filling large inputs
// quickly (fill.cpp): a tensor's elements in chunks, each chunk a stream of
// its own seeded from the tensor's key and the chunk's index, so that the
// values do not depend on how many threads fill the chunks. splitmix64 for
// the bits, Marsaglia and Tsang's ziggurat for normal values (about 30 ns
// an element with std::normal_distribution over std::mt19937_64, a few ns
// here). Internal to the harness.
#pragma once

#include <cstdint>
#include <functional>

namespace tilejit::harness {

/// One chunk's stream: splitmix64 from a seed.
class RandomStream {
public:
  /// The stream of chunk `chunk` of a fill keyed `key`.
  RandomStream(uint64_t key, uint64_t chunk);
  uint64_t bits() { return mix(state_ += 0x9E3779B97F4A7C15ull); }
  /// Uniform in (0, 1), never 0 (a logarithm's argument).
  double open_unit() {
    return (static_cast<double>(bits() >> 11) + 0.5) * 0x1.0p-53;
  }
  /// Uniform in [0, 1).
  double unit() { return static_cast<double>(bits() >> 11) * 0x1.0p-53; }
  /// N(0, 1).
  double normal();

  /// splitmix64's output function: a bijective mix of 64 bits.
  static uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

private:
  uint64_t state_;
};

/// Calls body(stream, begin, end) for the chunks of `count` items (chunks
/// of a fixed size, each with its own RandomStream of `key`), on up to as
/// many threads as the machine has; returns once every chunk is done.
void for_each_chunk(
    uint64_t key, int64_t count,
    const std::function<void(RandomStream &, int64_t, int64_t)> &body);

} // namespace tilejit::harness
