// dsl_mma_test.cpp - k.gemm outside a pipelined loop on the CPU: mma.sync
// for each operand type, operands given transposed (GemmOptions), and what
// the lowering cannot take reported at the author's line.
#include "dsl_error_of.h"

#include "tilejit/compiler/compile.h"
#include "tilejit/compiler/dsl.h"
#include "tilejit/error.h"

#include <catch2/catch.hpp>

using namespace tilejit;
using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;

TEST_CASE("gemm outside a pipelined loop compiles to mma.sync", "[compiler]") {
  for (auto [dtype, mma] :
       {std::pair{DType::bf16, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16"
                               ".f32"},
        std::pair{DType::f16, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16"
                              ".f32"},
        std::pair{DType::f32, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32"
                              ".f32"}}) {
    dsl::KernelBuilder k("small_gemm", 128);
    auto x = k.tensor("x", dtype, 2);
    auto out = k.tensor("out", DType::f32, 2);
    auto sa = k.alloc_shared(dtype, {32, 64});
    auto sb = k.alloc_shared(dtype, {32, 64});
    auto zero = k.index(0);
    k.store(k.load(x, {zero, zero}, {32, 64}), sa, {zero, zero});
    k.store(k.load(x, {zero, zero}, {32, 64}), sb, {zero, zero});
    k.barrier();
    auto acc = k.gemm(sa, sb, k.full({32, 32}, 0.0, DType::f32));
    k.store(acc, out, {zero, zero});
    CompiledKernel c = compile(k.build());
    INFO(name_of(dtype));
    CHECK(c.ptx.find(mma) != std::string::npos);
    CHECK(c.ptx.find("wgmma") == std::string::npos);
  }
}

TEST_CASE("gemm of transposed operands compiles to mma.sync", "[compiler]") {
  // g^T x for g (64 x 32 f32) and x (64 x 64 bf16): tf32, each pair's
  // elements loaded one by one.
  dsl::KernelBuilder k("weight_grad", 128);
  auto g = k.tensor("g", DType::f32, 2);
  auto x = k.tensor("x", DType::bf16, 2);
  auto out = k.tensor("out", DType::f32, 2);
  auto sg = k.alloc_shared(DType::f32, {64, 32});
  auto sx = k.alloc_shared(DType::bf16, {64, 64});
  auto zero = k.index(0);
  k.store(k.load(g, {zero, zero}, {64, 32}), sg, {zero, zero});
  k.store(k.load(x, {zero, zero}, {64, 64}), sx, {zero, zero});
  k.barrier();
  auto acc = k.gemm(sg, sx, k.full({32, 64}, 0.0, DType::f32),
                    dsl::GemmOptions{.tf32 = dsl::Tf32::rounded,
                                     .transpose_a = true,
                                     .transpose_b = true});
  k.store(acc, out, {zero, zero});
  CompiledKernel c = compile(k.build());
  CHECK(c.ptx.find("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32") !=
        std::string::npos);
  CHECK(c.ptx.find("cvt.rna.tf32.f32") != std::string::npos);
  // Its shapes, wrong: the author's line and the transposed product.
  CHECK_THAT(error_of([](auto &bad, auto &) {
               auto sa = bad.alloc_shared(DType::f32, {64, 32});
               auto sb = bad.alloc_shared(DType::f32, {32, 64});
               bad.gemm(
                   sa, sb, bad.full({32, 64}, 0.0, DType::f32),
                   dsl::GemmOptions{.transpose_a = true, .transpose_b = true});
             }),
             Contains("dsl_mma_test.cpp:") &&
                 Contains("error: 'tile.gemm' op shapes 'memref<64x32xf32, "
                          "#gpu.address_space<workgroup>>', 'memref<32x64xf32, "
                          "#gpu.address_space<workgroup>>' and "
                          "'tensor<32x64xf32>' do not make acc(M x N) += (a(K "
                          "x M))^T * b(K x N)"));
}

TEST_CASE("what the lowering cannot take is the author's error, at the line",
          "[compiler][error]") {
  auto error_of_compile = [](DType dtype, int64_t m, int64_t n) {
    dsl::KernelBuilder k("small_gemm", 256);
    auto out = k.tensor("out", DType::f32, 2);
    auto sa = k.alloc_shared(dtype, {m, 32});
    auto sb = k.alloc_shared(dtype, {n, 32});
    auto acc = k.gemm(sa, sb, k.full({m, n}, 0.0, DType::f32));
    k.store(acc, out, {k.index(0), k.index(0)});
    Kernel kernel = k.build();
    try {
      compile(kernel);
    } catch (const UserError &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(error_of_compile(DType::e4m3, 32, 32),
             Contains("dsl_mma_test.cpp:") &&
                 EndsWith("error: 'tile.gemm' op cannot lower to mma.sync: "
                          "operands must be bf16, f16 or f32 (tf32) outside a "
                          "pipelined TMA + WGMMA loop, got f8E4M3FN"));
  // 2 x 128 x 40 x 4 bytes of operands (f32 rows padded by 32 bytes), a
  // 64 KB accumulator buffer: fits in dynamic shared memory. 384 x 128
  // (80 KB + 192 KB) does not.
  CHECK(error_of_compile(DType::f32, 128, 128).empty());
  CHECK_THAT(error_of_compile(DType::f32, 384, 128),
             Contains("error: kernel needs 278528 bytes of shared memory") &&
                 Contains("a block of sm_90 has at most 232448 bytes"));
}
