// gemm_gpu_test.cpp - gemm on the GPU against the CPU reference within bf16
// rounding: multiples of the tile, tails in M, N and K, size 1 and 0, f32
// output, f16 and fp8 inputs, and a large product spot-checked by rows.
#include "registry.h"

#include "tilejit/runtime/ptxas.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace tilejit;

namespace {
ops::RunResult run(int64_t m, int64_t n, int64_t k, const char *out,
                   uint64_t seed, DType in = DType::bf16) {
  ops::OpArgs args;
  args.shape = {m, n, k};
  args.dtype = in;
  args.set["out_dtype"] = out;
  ops::RunOptions options;
  options.seed = seed;
  return ops::find_op("gemm")->run(args, options);
}
} // namespace

TEST_CASE("gemm matches the reference on tiles, tails and size 0", "[gemm]") {
  uint64_t seed = std::random_device{}();
  for (auto [m, n, k] : {std::tuple{128, 256, 64},
                         {256, 512, 512},
                         {384, 128, 1024},
                         {1000, 1000, 520},
                         {129, 258, 72},
                         {1, 2, 8},
                         {64, 96, 8},
                         {300, 2, 4096},
                         {0, 256, 64},
                         {128, 0, 64},
                         {128, 256, 0}}) {
    for (const char *out : {"bf16", "f32"}) {
      ops::RunResult r = run(m, n, k, out, seed++);
      INFO(r.shape << ": " << r.check);
      CHECK(r.passed);
    }
  }
}

TEST_CASE("gemm is right with cubins from the driver's linker and ptxas",
          "[gemm]") {
  // Two makers, two keys, two compiles: the driver's linker (relocatable,
  // wgmma serialised) and, where there is one, ptxas (whole program).
  std::optional<std::string> ptxas = rt::find_ptxas();
  std::vector<std::string> makers = {"0"};
  if (ptxas)
    makers.push_back(*ptxas);
  uint64_t seed = std::random_device{}();
  for (const std::string &maker : makers) {
    setenv("TILEJIT_PTXAS", maker.c_str(), 1);
    CHECK(rt::cubin_maker() == (maker == "0" ? "driver" : "ptxas"));
    ops::RunResult r = run(256, 512, 512, "bf16", seed++);
    INFO("TILEJIT_PTXAS=" << maker << ", " << r.shape << ": " << r.check);
    CHECK(r.passed);
  }
  unsetenv("TILEJIT_PTXAS");
}

TEST_CASE("gemm with f16 inputs (WGMMA f16), f16, bf16 and f32 outputs",
          "[gemm]") {
  uint64_t seed = std::random_device{}();
  for (auto [m, n, k] : {std::tuple{256, 512, 512}, {129, 258, 72}}) {
    for (const char *out : {"f16", "bf16", "f32"}) {
      ops::RunResult r = run(m, n, k, out, seed++, DType::f16);
      INFO(r.shape << ": " << r.check);
      CHECK(r.passed);
    }
  }
}

TEST_CASE("gemm with fp8 (WGMMA k32 e4m3, e5m2) and f32 (tf32) inputs",
          "[gemm]") {
  uint64_t seed = std::random_device{}();
  for (DType in : {DType::e4m3, DType::e5m2, DType::f32})
    for (auto [m, n, k] : {std::tuple{256, 512, 1024}, {129, 258, 144}})
      for (const char *out : {"bf16", "f32"}) {
        ops::RunResult r = run(m, n, k, out, seed++, in);
        INFO(r.shape << ": " << r.check);
        CHECK(r.passed);
      }
}

TEST_CASE("gemm at 4096^3, spot-checked rows", "[gemm][big]") {
  ops::RunResult r = run(4096, 4096, 4096, "bf16", 7);
  INFO(r.shape << ": " << r.check);
  CHECK(r.passed);
}
