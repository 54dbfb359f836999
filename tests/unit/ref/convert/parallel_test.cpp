// parallel_test.cpp - ref::parallel_ranges: every index once, in
// contiguous ranges, whatever the count and grain.
#include "common/parallel.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

using namespace tilejit;

TEST_CASE("parallel_ranges calls the body on every index once", "[parallel]") {
  for (int64_t n : {0, 1, 7, 64, 1000, 100003})
    for (int64_t grain : {1, 16, 1 << 20}) {
      CAPTURE(n, grain);
      std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
      std::mutex m;
      int64_t ranges = 0;
      std::atomic<int> empty{0}; // (Catch's assertions are one thread's)
      ref::parallel_ranges(n, grain, [&](int64_t begin, int64_t end) {
        empty += begin >= end;
        for (int64_t i = begin; i < end; ++i)
          ++seen[static_cast<size_t>(i)];
        std::lock_guard lock(m);
        ++ranges;
      });
      CHECK(empty == 0);
      for (int64_t i = 0; i < n; ++i)
        REQUIRE(seen[static_cast<size_t>(i)] == 1);
      if (n > 0 && grain >= n)
        CHECK(ranges == 1); // one range: the caller's thread alone
    }
}
