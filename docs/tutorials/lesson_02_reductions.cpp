// lesson_02_reductions.cpp - Tutorial 2: row-wise reductions in the tile
// DSL, a softmax over the rows of a tile. Built and run by the tests.
//
// A reduction keeps the reduced dimension with size 1: reduce_max of a
// (rows, cols) tile is (rows, 1). Subtracting it from the tile broadcasts it
// back along the columns, which costs nothing: the compiler lays the
// reduction's result out so that each thread already holds the maximum of
// every row it holds elements of (the layout is a "slice" of the tile's).
// Across threads the reduction uses warp shuffles, and shared memory only
// when a row spans several warps.
#include "tilejit/compiler/compile.h"
#include "tilejit/compiler/dsl.h"

#include <cstdio>
#include <string>

using namespace tilejit;

// out[r, :] = softmax(x[r, :]) for rows of `cols` (a power of two) f32.
Kernel row_softmax_kernel(int rows, int cols) {
  dsl::KernelBuilder k("row_softmax", /*threads=*/128);
  auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
  auto out = k.tensor("out", DType::f32, 2, dsl::inner_contiguous(16));

  auto row = k.block_id(0) * k.index(rows);
  auto tile = k.load(x, {row, k.index(0)}, {rows, cols});
  auto e = k.exp(tile - k.reduce_max(tile, 1)); // (rows, cols) - (rows, 1)
  k.store(e / k.reduce_sum(e, 1), out, {row, k.index(0)});
  return k.build();
}

int main() {
  for (int cols : {64, 1024}) {
    Kernel kernel = row_softmax_kernel(4, cols);
    CompileOptions options;
    options.keep = {Stage::gpu};
    CompiledKernel compiled = compile(kernel, options);
    // 64 columns of 4 floats a thread: 16 threads a row, all in one warp.
    // 1024 columns: a row spans the 4 warps, which meet in shared memory.
    bool shuffles = compiled.ptx.find("shfl.sync.bfly") != std::string::npos;
    bool barrier = compiled.ptx.find("bar.sync") != std::string::npos;
    std::printf("%4d columns: warp shuffles %s, shared-memory step %s\n", cols,
                shuffles ? "yes" : "no", barrier ? "yes" : "no");
    if (!shuffles || barrier != (cols == 1024))
      return 1;
  }
  // The tile IR: the reductions keep their dimension with size 1, and the
  // subtraction broadcasts the max back (`tilejit-opt -tile-assign-layouts`
  // on this text shows the layouts the compiler picks).
  std::printf("%s\n", row_softmax_kernel(4, 64).tile_ir().c_str());
  return 0;
}
