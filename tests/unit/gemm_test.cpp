// gemm_test.cpp - gemm's lowering: TMA copies, WGMMA and the tensor maps
// passed by value. Its argument checks are in its case table
// (kernels/gemm/gemm_test.cpp).
#include "gemm/gemm.h"

#include "tilejit/compiler/compile.h"
#include "tilejit/error.h"

#include <catch2/catch.hpp>

using namespace tilejit;
using rt::TensorView;

TEST_CASE("gemm lowers to TMA copies and WGMMA", "[kernels][compiler]") {
  for (int block_n : {128, 256}) {
    gemm::GemmSpec spec;
    spec.block_n = block_n;
    CompiledKernel compiled =
        compile(gemm::gemm_kernel(spec), CompileOptions{});
    INFO("block_n " << block_n);
    CHECK(compiled.ptx.find("cp.async.bulk.tensor.2d") != std::string::npos);
    CHECK(compiled.ptx.find("wgmma.mma_async.sync.aligned.m64n" +
                            std::to_string(block_n) + "k16.f32.bf16.bf16") !=
          std::string::npos);
    CHECK(compiled.ptx.find(".param .align 64 .b8 gemm_param_0[128]") !=
          std::string::npos);
  }
}
