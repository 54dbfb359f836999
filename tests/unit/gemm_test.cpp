// gemm_test.cpp - The argument checks of gemm, which reject before anything
// runs or is written (no GPU needed), and its lowering to TMA + WGMMA.
#include "gemm/gemm.h"

#include "tilejit/compiler/compile.h"
#include "tilejit/error.h"

#include <catch2/catch.hpp>

using namespace tilejit;
using rt::TensorView;

namespace {
std::string user_error(const TensorView &a, const TensorView &b,
                       const TensorView &c) {
  try {
    gemm::gemm(a, b, c);
  } catch (const UserError &e) {
    return e.what();
  }
  return "";
}
} // namespace

TEST_CASE("gemm rejects bad arguments", "[kernels][error]") {
  CUdeviceptr p = 0x100000;
  auto a = TensorView::contiguous(p, DType::bf16, {256, 512});
  auto b = TensorView::contiguous(p, DType::bf16, {128, 512});
  auto c = TensorView::contiguous(p, DType::bf16, {256, 128});
  // Deliberate mistake: i32 inputs.
  CHECK(user_error(TensorView::contiguous(p, DType::i32, {256, 512}), b, c) ==
        "gemm: argument 'a' has dtype i32; requires bf16, f16, f32 (multiplied "
        "as tf32), e4m3 or e5m2");
  // Deliberate mistake: b of another dtype than a.
  CHECK(user_error(a, TensorView::contiguous(p, DType::f16, {128, 512}), c) ==
        "gemm: argument 'b' has dtype f16; requires bf16");
  // Deliberate mistake: K not a multiple of 8 (rows not 16-byte aligned).
  CHECK(user_error(TensorView::contiguous(p, DType::bf16, {256, 100}),
                   TensorView::contiguous(p, DType::bf16, {128, 100}), c) ==
        "gemm: argument 'a' is bf16[256, 100] strides [100, 1] at 0x100000; "
        "requires unit inner stride, rows of a multiple of 16 bytes and a "
        "16-byte-aligned base");
  // Deliberate mistake: K differs between a and b.
  CHECK(user_error(a, TensorView::contiguous(p, DType::bf16, {128, 256}), c) ==
        "gemm: argument 'b' is bf16[128, 256] strides [256, 1]; requires K = "
        "512 columns, as 'a'");
  // Deliberate mistake: c of the wrong shape.
  CHECK(user_error(a, b, TensorView::contiguous(p, DType::bf16, {128, 256})) ==
        "gemm: argument 'c' is bf16[128, 256] strides [256, 1]; requires "
        "bf16, f16 or f32 [256, 128] with unit inner stride, an even N and "
        "even row stride");
  // Empty products need no GPU.
  CHECK(user_error(TensorView::contiguous(0, DType::bf16, {0, 512}), b,
                   TensorView::contiguous(0, DType::bf16, {0, 128})) == "");
}

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
