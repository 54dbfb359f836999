// transpose_tma_test.cpp - batched_transpose's kernel with its tiles
// through a TMA pipeline (BatchedTransposeSpec::tma_stages), compiled on the
// CPU: one 3-D tensor map of x's tiles a launch, an mbarrier a stage, the
// stages 128-byte aligned (past 48 KB: realigned dynamic shared memory).
// Its GPU test is tests/gpu/transpose_tma_gpu_test.cpp.
#include "transpose/batched_transpose.h"

#include "tilejit/compiler/compile.h"

#include <catch2/catch.hpp>

using namespace tilejit;

TEST_CASE("batched_transpose's TMA pipeline compiles for 1-, 2- and 4-byte "
          "elements",
          "[kernels][compiler]") {
  for (DType dtype : {DType::e4m3, DType::bf16, DType::f32}) {
    INFO(name_of(dtype));
    const CompiledKernel c = compile(transpose::batched_transpose_kernel(
        transpose::batched_transpose_tma_spec(dtype, 4, 8, 128)));
    CHECK(c.ptx.find("cp.async.bulk.tensor.3d.shared::cluster.global.tile."
                     "mbarrier::complete_tx::bytes") != std::string::npos);
    CHECK(c.ptx.find("mbarrier.try_wait.parity") != std::string::npos);
    CHECK(c.ptx.find(".param .align 64 .b8 batched_transpose_param_18[128]") !=
          std::string::npos);
    REQUIRE(c.abi.args.size() == 3);
    const AbiArg &map = c.abi.args[2];
    CHECK(map.kind == AbiArg::Kind::tensor_map);
    CHECK(map.name == "x");
    CHECK(map.box == std::vector<int64_t>{1, 64, 64});
    CHECK(map.swizzle == 0);
    // Four stages of 64 x 64: 16 KB of 1-byte, 32 KB of 2-byte elements
    // beside the transpose's buffer fit in 48 KB of static shared memory;
    // 64 KB of 4-byte elements do not (dynamic, realigned).
    if (dtype == DType::f32)
      CHECK(c.abi.shared_bytes > 4 * 64 * 64 * 4);
    else
      CHECK(c.abi.shared_bytes == 0);
  }
}

TEST_CASE("batched_transpose's TMA pipeline compiles for other tile shapes",
          "[kernels][compiler]") {
  for (auto [bx, by] : {std::pair{64, 128}, {128, 64}, {128, 128}})
    for (DType dtype : {DType::e4m3, DType::bf16, DType::f32}) {
      if (bx * by * size_of(dtype) > 32768)
        continue; // three 64 KB stages and the transpose's buffer: too big
      INFO(bx << " x " << by << " " << name_of(dtype));
      const CompiledKernel c = compile(transpose::batched_transpose_kernel(
          transpose::batched_transpose_tma_spec(dtype, 3, 4, 256, bx, by)));
      REQUIRE(c.abi.args.size() == 3);
      CHECK(c.abi.args[2].box == std::vector<int64_t>{1, bx, by});
    }
}
