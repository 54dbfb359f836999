// lesson_03_gemm.cpp - Tutorial 3: a matrix product with shared tiles, a
// pipelined loop and gemm, which tilejit lowers to TMA copies and WGMMA on
// sm_90a. Built and run by the tests.
//
// Each block computes a 128 x 256 tile of c = a * b^T. Its loop walks K in
// steps of 64: copy a 128 x 64 tile of a and a 256 x 64 tile of b to shared
// memory, multiply-accumulate. `pipelined(steps, 4, ...)` lets the copies run
// three steps ahead of the math: the compiler gives each step its own shared
// buffers, issues the copies from one producer warpgroup with the tensor
// memory accelerator, and has two consumer warpgroups run wgmma.mma_async
// as soon as a step's tiles have landed (mbarriers keep them in step).
#include "tilejit/compiler/compile.h"
#include "tilejit/compiler/dsl.h"

#include <cstdio>
#include <string>

using namespace tilejit;

Kernel matmul_kernel() {
  dsl::KernelBuilder k("matmul", /*threads=*/384);
  auto a = k.tensor("a", DType::bf16, 2, dsl::inner_contiguous(16));
  auto b = k.tensor("b", DType::bf16, 2, dsl::inner_contiguous(16));
  auto c = k.tensor("c", DType::f32, 2, dsl::inner_contiguous(8));

  auto m0 = k.block_id(1) * k.index(128), n0 = k.block_id(0) * k.index(256);
  auto steps = (k.dim(a, 1) + k.index(63)) / k.index(64);
  auto sa = k.alloc_shared(DType::bf16, {128, 64});
  auto sb = k.alloc_shared(DType::bf16, {256, 64});
  auto zero = k.full({128, 256}, 0.0, DType::f32);
  auto acc = k.pipelined(steps, 4, {zero},
                         [&](dsl::Value step, std::vector<dsl::Value> carried) {
                           auto k0 = step * k.index(64);
                           k.copy(a, {m0, k0}, sa);
                           k.copy(b, {n0, k0}, sb);
                           return std::vector{k.gemm(sa, sb, carried[0])};
                         })[0];
  k.store(acc, c, {m0, n0});
  return k.build();
}

int main() {
  CompiledKernel compiled = compile(matmul_kernel(), CompileOptions{});
  for (const char *instruction :
       {"cp.async.bulk.tensor.2d", "mbarrier.try_wait.parity",
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"}) {
    bool found = compiled.ptx.find(instruction) != std::string::npos;
    std::printf("%-55s %s\n", instruction, found ? "yes" : "MISSING");
    if (!found)
      return 1;
  }
  // The tensor maps of a and b are kernel parameters passed by value.
  std::printf(
      "%s\n",
      compiled.ptx.substr(compiled.ptx.find(".visible .entry"), 200).c_str());
  return 0;
}
