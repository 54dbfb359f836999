// sinkhorn_normalize_gpu_test.cpp - sinkhorn_normalize on the GPU against
// the CPU reference within the spec's fp32 tolerance: TileKernels' test
// shapes, other repeats and matrix sizes, tails and size 0.
#include "registry.h"

#include <catch2/catch.hpp>

#include <random>

using namespace tilejit;

namespace {
ops::RunResult run(std::vector<int64_t> shape, int repeat, uint64_t seed) {
  ops::OpArgs args;
  args.shape = std::move(shape);
  args.set["repeat"] = std::to_string(repeat);
  ops::RunOptions options;
  options.seed = seed;
  return ops::find_op("sinkhorn_normalize")->run(args, options);
}
} // namespace

TEST_CASE("sinkhorn_normalize matches the reference on TileKernels' shapes",
          "[sinkhorn_normalize]") {
  uint64_t seed = std::random_device{}();
  for (int64_t n0 : {1, 2})
    for (int64_t n1 : {1, 1024, 4096}) {
      ops::RunResult r = run({n0, n1, 4, 4}, 10, seed++);
      INFO(r.shape << ": " << r.check);
      CHECK(r.passed);
    }
}

TEST_CASE("sinkhorn_normalize with other repeats, sizes, tails and size 0",
          "[sinkhorn_normalize]") {
  uint64_t seed = std::random_device{}();
  for (auto [shape, repeat] : {std::pair{std::vector<int64_t>{77, 4, 4}, 1},
                               {std::vector<int64_t>{65, 4, 4}, 3},
                               {std::vector<int64_t>{130, 8, 8}, 10},
                               {std::vector<int64_t>{3, 2, 2}, 10},
                               {std::vector<int64_t>{5, 16, 16}, 5},
                               {std::vector<int64_t>{0, 4, 4}, 10}}) {
    ops::RunResult r = run(shape, repeat, seed++);
    INFO(r.shape << ": " << r.check);
    CHECK(r.passed);
  }
}
