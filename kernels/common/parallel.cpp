// parallel.cpp - parallel_ranges (parallel.h).
#include "common/parallel.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace tilejit::ref {

void parallel_ranges(int64_t n, int64_t grain,
                     const std::function<void(int64_t, int64_t)> &body) {
  if (n <= 0)
    return;
  const int64_t threads =
      std::clamp<int64_t>(n / std::max<int64_t>(grain, 1), 1,
                          std::max(1u, std::thread::hardware_concurrency()));
  if (threads == 1) {
    body(0, n);
    return;
  }
  // Ranges of `per`; the last may be shorter, none is empty.
  const int64_t per = (n + threads - 1) / threads;
  const int64_t ranges = (n + per - 1) / per;
  std::vector<std::thread> pool;
  for (int64_t t = 1; t < ranges; ++t)
    pool.emplace_back(
        [&, t] { body(std::min(n, t * per), std::min(n, (t + 1) * per)); });
  body(0, std::min(n, per));
  for (std::thread &t : pool)
    t.join();
}

} // namespace tilejit::ref
