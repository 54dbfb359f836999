// random_stream.cpp - splitmix64 streams, the ziggurat and the chunks'
// threads (random_stream.h).
#include "random_stream.h"

#include "common/parallel.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace tilejit::harness {

namespace {

/// Marsaglia and Tsang's tables for 128 layers under exp(-x^2 / 2): a
/// 32-bit signed draw hz in layer hz & 127 is accepted as hz * w[i] when
/// |hz| < k[i] (the layer's part inside the curve).
struct Ziggurat {
  static constexpr double r = 3.442619855899; // the base layer's edge
  std::array<uint32_t, 128> k{};
  std::array<double, 128> w{}, f{};
  Ziggurat() {
    const double m1 = 2147483648.0, v = 9.91256303526217e-3;
    double dn = r, tn = r;
    const double q = v / std::exp(-0.5 * dn * dn);
    k[0] = static_cast<uint32_t>(dn / q * m1);
    k[1] = 0;
    w[0] = q / m1;
    w[127] = dn / m1;
    f[0] = 1.0;
    f[127] = std::exp(-0.5 * dn * dn);
    for (int i = 126; i >= 1; --i) {
      dn = std::sqrt(-2.0 * std::log(v / dn + std::exp(-0.5 * dn * dn)));
      k[i + 1] = static_cast<uint32_t>(dn / tn * m1);
      tn = dn;
      f[i] = std::exp(-0.5 * dn * dn);
      w[i] = dn / m1;
    }
  }
};

const Ziggurat kZiggurat;

} // namespace

RandomStream::RandomStream(uint64_t key, uint64_t chunk)
    : state_(mix(key ^ mix(chunk + 0x632BE59BD9B4E019ull))) {}

double RandomStream::normal() {
  const Ziggurat &z = kZiggurat;
  for (;;) {
    const auto hz = static_cast<int32_t>(bits() >> 32);
    const int i = hz & 127;
    const double x = hz * z.w[i];
    if (static_cast<uint32_t>(std::abs(static_cast<int64_t>(hz))) < z.k[i])
      return x;
    if (i == 0) { // the tail past r
      double t, y;
      do {
        t = -std::log(open_unit()) / Ziggurat::r;
        y = -std::log(open_unit());
      } while (y + y < t * t);
      return hz > 0 ? Ziggurat::r + t : -Ziggurat::r - t;
    }
    // The wedge between the layer's inner part and its edge.
    if (z.f[i] + open_unit() * (z.f[i - 1] - z.f[i]) < std::exp(-0.5 * x * x))
      return x;
  }
}

void for_each_chunk(
    uint64_t key, int64_t count,
    const std::function<void(RandomStream &, int64_t, int64_t)> &body) {
  constexpr int64_t chunk = int64_t{1} << 16;
  ref::parallel_ranges((count + chunk - 1) / chunk, 1,
                       [&](int64_t first, int64_t last) {
                         for (int64_t c = first; c < last; ++c) {
                           RandomStream s(key, static_cast<uint64_t>(c));
                           body(s, c * chunk, std::min(count, (c + 1) * chunk));
                         }
                       });
}

} // namespace tilejit::harness
