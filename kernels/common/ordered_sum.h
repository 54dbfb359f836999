// ordered_sum.h - Sums in a fixed order with many loads in flight: the
// terms i = 0 .. count - 1 added as ((init + t_0) + t_1) + ..., bitwise the
// sequential loop's result, but up to `unroll` terms loaded before any of
// them is added (a loop that loads and adds a term at a time waits a
// memory round trip a term).
#pragma once

#include "tilejit/compiler/dsl.h"

#include <functional>
#include <vector>

namespace tilejit {

/// Sums of several term sequences at once (each `terms(i)` returns one term
/// of each, as `init` has), in order: count / unroll steps of `unroll`
/// terms, then what is left in at most one step each of unroll / 2,
/// unroll / 4, ..., 1 terms. `count` is an index, `unroll` a power of two.
inline std::vector<dsl::Value>
ordered_sums(dsl::KernelBuilder &k, dsl::Value count, int64_t unroll,
             const std::vector<dsl::Value> &init,
             const std::function<std::vector<dsl::Value>(dsl::Value)> &terms) {
  using Values = std::vector<dsl::Value>;
  Values acc = init;
  dsl::Value done = k.index(0);
  for (int64_t u = unroll; u >= 1; u /= 2) {
    // Steps of u terms from `done` on: many for the first u, then 0 or 1
    // (fewer than 2u are left).
    auto width = k.index(u), steps = (count - done) / width, from = done;
    acc = k.serial(k.index(0), steps, acc, [&](dsl::Value s, Values a) {
      auto at = from + s * width;
      std::vector<Values> loaded;
      for (int64_t i = 0; i < u; ++i)
        loaded.push_back(terms(at + k.index(i)));
      for (const Values &t : loaded)
        for (size_t j = 0; j < a.size(); ++j)
          a[j] = a[j] + t[j];
      return a;
    });
    done = done + steps * width;
  }
  return acc;
}

} // namespace tilejit
