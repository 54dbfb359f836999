// topk_gate_gpu_test.cpp - topk_gate on the GPU against the CPU reference,
// bitwise: TileKernels' (E, K) test pairs, tails, size 1 and 0.
#include "registry.h"

#include <catch2/catch.hpp>

#include <random>

using namespace tilejit;

namespace {
ops::RunResult run(int64_t t, int64_t e, int64_t k, uint64_t seed) {
  ops::OpArgs args;
  args.shape = {t, e};
  args.set["num_topk"] = std::to_string(k);
  ops::RunOptions options;
  options.seed = seed;
  return ops::find_op("topk_gate")->run(args, options);
}

constexpr std::pair<int64_t, int64_t> kTestPairs[] = {
    {72, 6}, {32, 6},  {64, 6},  {96, 6},  {16, 6},
    {36, 6}, {108, 6}, {128, 6}, {144, 6}, {256, 8}};
} // namespace

TEST_CASE("topk_gate is bit-exact on small shapes, tails and size 0",
          "[topk_gate]") {
  uint64_t seed = std::random_device{}();
  for (auto [e, k] : kTestPairs)
    for (int64_t t : {1, 3, 37}) {
      ops::RunResult r = run(t, e, k, seed++);
      INFO(r.shape);
      CHECK(r.check ==
            "bitwise equal to CPU reference (" + std::to_string(t) + " rows)");
    }
  // Odd expert counts (no vector loads), K = E and K = 1, and no tokens.
  for (auto [t, e, k] : {std::tuple{5, 7, 7},
                         {9, 33, 1},
                         {2, 1, 1},
                         {0, 64, 6},
                         {40, 1000, 4}}) {
    ops::RunResult r = run(t, e, k, seed++);
    INFO(r.shape);
    CHECK(r.passed);
    CHECK_THAT(r.check, Catch::Matchers::StartsWith("bitwise equal"));
  }
}

TEST_CASE("topk_gate on TileKernels' test shapes", "[topk_gate][big]") {
  uint64_t seed = std::random_device{}();
  for (int64_t t : {4001, 8001})
    for (auto [e, k] : kTestPairs) {
      ops::RunResult r = run(t, e, k, seed++);
      INFO(r.shape);
      CHECK(r.passed);
      CHECK_THAT(r.check, Catch::Matchers::StartsWith("bitwise equal"));
    }
}
