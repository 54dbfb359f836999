// per_token_cast_test.cpp - per_token_cast's tiling and the kernel's
// lowering: fp8 conversions and warp shuffles in its PTX; its two C++
// entries reach the op's checks. Its argument checks are in its case table
// (kernels/quant/per_token_cast_test.cpp).
#include "op_test.h"
#include "quant/per_token_cast.h"

#include "tilejit/compiler/compile.h"
#include "tilejit/error.h"

#include <catch2/catch.hpp>

#include <bit>

using namespace tilejit;
using rt::TensorView;

TEST_CASE("per_token_cast lowers to fp8 pair conversions and warp shuffles",
          "[kernels][compiler]") {
  for (int group : {32, 128}) {
    quant::PerTokenCastSpec spec;
    spec.vector_bytes = 16;
    spec.round_sf = 1;
    spec = quant::per_token_cast_tiling(spec, 8001, 7168, group);
    CompileOptions options;
    CompiledKernel compiled =
        compile(quant::per_token_cast_kernel(spec), options);
    INFO("group " << group);
    CHECK(compiled.ptx.find("cvt.rn.satfinite.e4m3x2.f32") !=
          std::string::npos);
    CHECK(compiled.ptx.find("shfl.sync.bfly") != std::string::npos);
    CHECK(compiled.ptx.find("ld.global.v4") != std::string::npos);
  }
}

TEST_CASE("per_token_cast takes one group a row of K = parts x p unpadded",
          "[kernels][compiler]") {
  struct Case {
    DType dtype;
    int64_t k;
    int32_t group, threads;
    bool inside; // one row a block: no bounds checks
  };
  // K = 2560 = 5 x 512: bf16 rows in 64 threads of 8-element vectors;
  // K = 4096 (a power of two) is one padded group; bf16 K = 7168 is 56
  // elements a thread, one row a block.
  for (Case c : {Case{DType::bf16, 2560, 2560, 64, true},
                 Case{DType::f32, 2560, 2560, 128, true},
                 Case{DType::bf16, 6144, 6144, 128, true},
                 Case{DType::bf16, 7168, 7168, 128, true},
                 Case{DType::bf16, 4096, 4096, 128, false}}) {
    quant::PerTokenCastSpec spec;
    spec.in_dtype = c.dtype;
    spec.vector_bytes = 16;
    spec = quant::per_token_cast_tiling(spec, 8001, c.k, c.k);
    INFO("K " << c.k << " " << name_of(c.dtype));
    CHECK(spec.group == c.group);
    CHECK(spec.block_k == c.group);
    CHECK(spec.threads == c.threads);
    CHECK(spec.inside == c.inside);
    CompiledKernel compiled = compile(quant::per_token_cast_kernel(spec));
    CHECK(compiled.ptx.find("ld.global.v4") != std::string::npos);
    // Unchecked accesses have no element-by-element fallback.
    const bool element_loads =
        compiled.ptx.find(c.dtype == DType::f32
                              ? "ld.global.b32"
                              : "ld.global.b16") != std::string::npos;
    CHECK(element_loads == !c.inside);
  }
}

TEST_CASE("per_token_cast sees short rows of K = parts x p as parts",
          "[kernels][compiler]") {
  struct Case {
    DType dtype;
    int64_t k;
    int32_t parts, block_m, threads, vector_bytes;
  };
  // A thread holds one vector of each part, at most 20 elements: K = 576 =
  // 9 x 64 takes 4-byte vectors in bf16 (18 elements) and 8-byte ones in
  // f32; K = 384 = 3 x 128 and 192 = 3 x 64 8-byte ones in bf16 (12
  // elements), K = 192 16-byte ones in f32. Blocks of 256 threads.
  for (Case c : {Case{DType::bf16, 576, 9, 8, 256, 4},
                 Case{DType::f32, 576, 9, 8, 256, 8},
                 Case{DType::bf16, 384, 3, 8, 256, 8},
                 Case{DType::bf16, 192, 3, 16, 256, 8},
                 Case{DType::f32, 192, 3, 16, 256, 16}}) {
    quant::PerTokenCastSpec spec;
    spec.in_dtype = c.dtype;
    spec = quant::per_token_cast_tiling(spec, 8001, c.k, c.k);
    INFO("K " << c.k << " " << name_of(c.dtype));
    CHECK(spec.group == c.k);
    CHECK(spec.block_k == c.k);
    CHECK(spec.parts == c.parts);
    CHECK(spec.block_m == c.block_m);
    CHECK(spec.threads == c.threads);
    CHECK(spec.vector_bytes == c.vector_bytes);
    CompiledKernel compiled = compile(quant::per_token_cast_kernel(spec));
    const char *vector_load = c.vector_bytes == 4   ? "ld.global.b32"
                              : c.vector_bytes == 8 ? "ld.global.v2.b32"
                                                    : "ld.global.v4.b32";
    CHECK(compiled.ptx.find(vector_load) != std::string::npos);
    // The parts are reduced in registers: one butterfly over p / vector
    // lanes, not one per part.
    const size_t lanes = static_cast<size_t>(
        c.k / c.parts / (c.vector_bytes / static_cast<int>(size_of(c.dtype))));
    size_t shuffles = 0;
    for (size_t at = compiled.ptx.find("shfl.sync.bfly");
         at != std::string::npos;
         at = compiled.ptx.find("shfl.sync.bfly", at + 1))
      ++shuffles;
    CHECK(shuffles == static_cast<size_t>(std::countr_zero(lanes)));
  }
}

TEST_CASE("per_token_cast takes a partial last column block as a tail",
          "[kernels][compiler]") {
  // K = 576, group 128: four 32 x 128 blocks a row of blocks, and the last
  // 64 columns in 32 x 64 boxes behind a branch on the block's column.
  quant::PerTokenCastSpec spec;
  spec.vector_bytes = 16;
  spec = quant::per_token_cast_tiling(spec, 8001, 576, 128);
  CHECK(spec.block_k == 128);
  CHECK(spec.block_m == 32);
  CHECK(spec.tail == 64);
  CompileOptions options;
  options.keep = {Stage::tile};
  CompiledKernel compiled =
      compile(quant::per_token_cast_kernel(spec), options);
  const std::string &tile = compiled.stages.at(Stage::tile);
  CHECK(tile.find("tensor<32x128xbf16>") != std::string::npos);
  CHECK(tile.find("tensor<32x64xbf16>") != std::string::npos);
  // Whole column blocks have no tail.
  CHECK(quant::per_token_cast_tiling({}, 8001, 7168, 128).tail == 0);
  CHECK(quant::per_token_cast_tiling({}, 8001, 576, 64).tail == 0);
  // Nor does one group a row.
  CHECK(quant::per_token_cast_tiling({}, 8001, 576, 576).tail == 0);
}

TEST_CASE("per_token_cast takes smaller tiles where M gives few blocks",
          "[kernels][compiler]") {
  // K = 576, group 128: 32 x 128 tiles give 1255 blocks at M = 8001 but
  // 630 at M = 4001, which takes 16 x 128 (1255 blocks), its tail in
  // 16 x 64 boxes.
  quant::PerTokenCastSpec spec;
  spec.vector_bytes = 16;
  CHECK(quant::per_token_cast_tiling(spec, 8001, 576, 128).block_m == 32);
  spec = quant::per_token_cast_tiling(spec, 4001, 576, 128);
  CHECK(spec.block_m == 16);
  CHECK(spec.tail == 64);
  CompileOptions options;
  options.keep = {Stage::tile};
  const std::string tile = compile(quant::per_token_cast_kernel(spec), options)
                               .stages.at(Stage::tile);
  CHECK(tile.find("tensor<16x128xbf16>") != std::string::npos);
  CHECK(tile.find("tensor<16x64xbf16>") != std::string::npos);
  // Never below 2048 elements a tile (16 a thread): one row of 7168 takes
  // 4 x 512, not 1 x 512.
  CHECK(quant::per_token_cast_tiling({}, 1, 7168, 128).block_m == 4);
  // A tile of one row stays one row.
  CHECK(quant::per_token_cast_tiling({}, 1, 7168, 7168).block_m == 1);
}

TEST_CASE("per_token_cast's C++ entries pass their arguments to the op",
          "[kernels][error]") {
  using harness::fake;
  auto error = [](auto &&call) -> std::string {
    try {
      call();
    } catch (const UserError &e) {
      return e.what();
    }
    return "";
  };
  // Plain x: the group reaches the op's check.
  CHECK(error([] {
          quant::per_token_cast(fake(DType::bf16, {8, 512}), "e4m3", 96,
                                fake(DType::e4m3, {8, 512}, {}, 0x20000),
                                fake(DType::f32, {8, 6}, {}, 0x30000));
        }) == "per_token_cast: argument 'num_per_channels' is 96; requires "
              "16, 32, 64, 128, or K = 512 when K is a multiple of 64");
  // A quantized x: its block size and E4M3 scales reach the checks.
  CHECK(error([] {
          quant::per_token_cast(fake(DType::e4m3, {8, 512}),
                                fake(DType::f32, {1, 8}, {}, 0x10000), 64, 64,
                                "e4m3", 128,
                                fake(DType::e4m3, {8, 512}, {}, 0x20000),
                                fake(DType::f32, {8, 4}, {}, 0x30000));
        }) == "per_token_cast: argument 'x_block_size' is (64, 64); requires "
              "x_block_m 1, 32 or 128 and x_block_k 16, 32, 64 or 128");
  CHECK(error([] {
          quant::per_token_cast(
              fake(DType::e4m3, {8, 512}),
              fake(DType::f32, {1, 4}, {}, 0x10000), 128, 128, "e4m3", 128,
              fake(DType::e4m3, {8, 512}, {}, 0x20000),
              fake(DType::f32, {8, 4}, {}, 0x30000), false, true, false, true);
        }) == "per_token_cast: arguments 'use_e4m3_sf' and 'round_sf' are "
              "both true; requires at most one");
}
