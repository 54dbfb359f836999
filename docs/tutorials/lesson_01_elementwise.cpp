// lesson_01_elementwise.cpp - Tutorial 1: an element-wise kernel in the
// tile DSL, compiled to PTX, every stage printed. Built and run by the tests.
//
// A tilejit kernel is a C++ function that builds IR through a builder. Its
// arguments are global tensors (strided, sizes and strides known at run
// time) and scalars; its body moves *tiles* - here a 32x128 tile per thread
// block - between global memory and registers and computes on them. How the
// 256 threads share a tile, which instructions load it, and how the tails of
// a tensor whose size is not a multiple of the tile are handled, is the
// compiler's job.
#include "tilejit/compiler/compile.h"
#include "tilejit/compiler/dsl.h"

#include <cstdio>
#include <string>

using namespace tilejit;

// out = x * scale + bias, over a 2-D f32 tensor.
Kernel scale_add_kernel(int block_m, int block_n) {
  dsl::KernelBuilder k("scale_add", /*threads=*/256);
  auto x = k.tensor("x", DType::f32, 2);
  auto out = k.tensor("out", DType::f32, 2);
  auto scale = k.scalar("scale", DType::f32);
  auto bias = k.scalar("bias", DType::f32);

  // Block (i, j) of the grid handles the tile whose first element is
  // (i * block_m, j * block_n).
  auto row = k.block_id(0) * k.index(block_m);
  auto col = k.block_id(1) * k.index(block_n);

  // A load of a tile past the tensor's end reads zeros; a store drops what
  // falls outside. Arithmetic on a tile is element-wise; a scalar meeting a
  // tile is broadcast.
  auto tile = k.load(x, {row, col}, {block_m, block_n});
  k.store(tile * scale + bias, out, {row, col});
  return k.build();
}

int main() {
  Kernel kernel = scale_add_kernel(32, 128);

  // The kernel as tile IR (what `tilejit compile --dump tile` prints).
  std::printf("%s\n", kernel.tile_ir().c_str());

  // Compile, keeping the LLVM IR; the PTX is always kept.
  CompileOptions options;
  options.keep = {Stage::llvm};
  CompiledKernel compiled = compile(kernel, options);
  std::printf("kernel %s: %d threads, %zu parameters, %zu bytes of PTX\n",
              compiled.name.c_str(), compiled.threads, compiled.params.size(),
              compiled.ptx.size());
  for (const StageTime &t : compiled.timings)
    std::printf("  stage %-5s %6.2f ms\n", t.stage.c_str(), t.ms);

  // The multiply and the add contract into one fused multiply-add, as nvcc
  // would do by default.
  bool fused = compiled.ptx.find("fma.rn.f32") != std::string::npos;
  std::printf("fused multiply-add in the PTX: %s\n", fused ? "yes" : "no");
  return compiled.ptx.find(".entry scale_add(") == std::string::npos;
}
