// per_token_cast_gpu_test.cpp - per_token_cast on the GPU against the CPU
// reference, bytewise (data and scales): TileKernels' test grid (M, K,
// group size, flags, input dtype), a row stride of 2K, tails and size 0.
#include "quant/per_token_cast.h"
#include "quant/per_token_cast_run.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <future>
#include <random>
#include <thread>
#include <vector>

using namespace tilejit;
using ops::PerTokenCastCase;
using ops::PerTokenCastRun;

namespace {

std::string check(PerTokenCastCase c) {
  PerTokenCastRun run(c);
  run.call();
  return run.check();
}

std::string describe(const PerTokenCastCase &c) {
  return std::string(name_of(c.dtype)) + " " + std::to_string(c.m) + "x" +
         std::to_string(c.k) + " stride " + std::to_string(c.row_stride) +
         " group " + std::to_string(c.group) + " flags " +
         std::to_string(c.col_major) + std::to_string(c.round_sf) +
         std::to_string(c.packed);
}

/// The flag sets the original tests use, and the unrounded row-major one.
constexpr bool kFlags[][3] = {
    {false, true, false}, {true, true, true}, {false, false, false}};

} // namespace

TEST_CASE("per_token_cast is exact on small shapes, tails and size 0",
          "[per_token_cast]") {
  uint64_t seed = std::random_device{}();
  for (DType dtype : {DType::bf16, DType::f32})
    for (const auto &f : kFlags)
      for (auto [m, k, group] : {std::tuple{64, 512, 128},
                                 {1, 128, 128},
                                 {17, 576, 128},
                                 {33, 576, 32},
                                 {5, 640, 64},
                                 {3, 192, 16},
                                 {7, 576, 576},   // 9 parts of 64
                                 {40, 384, 384},  // 3 parts of 128
                                 {17, 320, 128},  // a last group of 64
                                 {33, 704, 128},  // the same, 5 whole
                                 {9, 1056, 64},   // 16 whole, a last of 32
                                 {5, 200, 64},    // a last group of 8
                                 {48, 192, 192},  // 3 parts of 64
                                 {9, 2560, 2560}, // group 5 x 512
                                 {2, 1280, 1280}, // group 5 x 256
                                 {3, 3072, 3072}, // group 3 x 1024
                                 {1, 64, 64},
                                 {0, 512, 128},
                                 {130, 4096, 128},
                                 // Enough rows for the full tiles (fewer
                                 // rows take smaller ones), with tails.
                                 {6600, 576, 128},
                                 {8001, 576, 64},
                                 {2100, 2048, 128}}) {
        PerTokenCastCase c{dtype, m, k, 0, group, f[0], f[1], f[2], seed++};
        INFO(describe(c));
        CHECK(check(c) == "");
      }
}

TEST_CASE("per_token_cast's small-shape cases reach the full tiles",
          "[per_token_cast]") {
  // The last three shapes above have enough blocks for the tiles larger
  // M take (per_token_cast_tiling).
  for (auto [m, k, group, block_m] : {std::tuple{6600, 576, 128, 32},
                                      {8001, 576, 64, 64},
                                      {2100, 2048, 128, 8}}) {
    INFO(m << "x" << k << " group " << group);
    CHECK(quant::per_token_cast_tiling({}, m, k, group).block_m == block_m);
    CHECK(quant::per_token_cast_tiling({}, m, k, group).block_m ==
          quant::per_token_cast_tiling({}, 8001, k, group).block_m);
  }
}

TEST_CASE("per_token_cast follows a row stride of 2K, as the original's "
          "test does",
          "[per_token_cast]") {
  for (DType dtype : {DType::bf16, DType::f32}) {
    PerTokenCastCase c{dtype, 301, 2048, 4096, 128, false, true, false, 11};
    INFO(describe(c));
    CHECK(check(c) == "");
    for (int64_t group : {32, 128, 576}) {
      c.group = group;
      c.k = 576;
      c.row_stride = 1152;
      INFO(describe(c));
      CHECK(check(c) == "");
    }
    // bf16 rows 8-byte aligned (no 16-byte vectors) and 4-byte aligned
    // (no 8-byte ones either).
    for (int64_t stride : {580, 578}) {
      c.row_stride = stride;
      INFO(describe(c));
      CHECK(check(c) == "");
    }
  }
}

TEST_CASE("per_token_cast on TileKernels' test grid", "[per_token_cast][big]") {
  uint64_t seed = std::random_device{}();
  std::vector<PerTokenCastCase> cases;
  for (int64_t m : {4001, 8001})
    for (int64_t k : {576, 2048, 2560, 3072, 4096, 6144, 7168})
      for (int64_t group : {32, 64, 128, static_cast<int>(k)})
        for (DType dtype : {DType::bf16, DType::f32})
          for (const auto &f : {kFlags[0], kFlags[1]})
            cases.push_back({dtype, m, k, 0, group, f[0], f[1], f[2], seed++});
  // The CPU references dominate: prepare them on all cores, a batch at a
  // time, then run the GPU calls one by one.
  const size_t batch = std::max(1u, std::thread::hardware_concurrency());
  for (size_t first = 0; first < cases.size(); first += batch) {
    std::vector<std::future<PerTokenCastRun>> prepared;
    for (size_t i = first; i < std::min(cases.size(), first + batch); ++i)
      prepared.push_back(std::async(std::launch::async, [&cases, i] {
        return PerTokenCastRun::prepare(cases[i]);
      }));
    for (size_t i = first; i < std::min(cases.size(), first + batch); ++i) {
      PerTokenCastRun run = prepared[i - first].get();
      run.upload();
      run.call();
      INFO(describe(cases[i]));
      CHECK(run.check() == "");
    }
  }
}
