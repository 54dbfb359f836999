// lesson_08_kernel_chains.cpp - Tutorial 8: an op of two kernels chained by
// a programmatic dependent launch (Hopper). Built and run by the tests.
//
// The op scales every row of x by the inverse of the whole tensor's sum: the
// first kernel sums each block's rows into `partial` (one value a block),
// the second needs every block's partial sum before it can scale. Two
// kernels on one stream would run one after the other, the second's launch
// and ramp-up after the first's last block. With k.programmatic_launch()
// the host launches the second with the programmatic stream serialization
// attribute (ABI `programmatic`): its blocks may start while the first
// finishes, and wait (griddepcontrol.wait) for that grid to complete and
// its writes to be visible.
//
// By default the wait is at the kernel's start. k.grid_wait() puts it where
// the kernel first needs the grid before it: what comes before it runs
// while that grid finishes. Here the second kernel loads its tile of x (the
// op's input, which the first kernel only reads) and squares it before the
// wait, and reads `partial` after. What may come before the wait: no
// global writes, and reads only of what the grid before does not write.
// The kernel after this one launches only once the wait is over
// (griddepcontrol.launch_dependents follows the wait), so what it reads
// before its own wait was written two grids back. get_fused_mapping's
// place kernel counts its warps' expert ids this way while the count
// kernel finishes (kernels/moe/get_fused_mapping.dsl.cpp).
#include "tilejit/compiler/compile.h"
#include "tilejit/compiler/dsl.h"

#include <cstdio>
#include <string>

using namespace tilejit;

constexpr int64_t kRows = 4, kCols = 256;

// partial (blocks,) f32: the sum of x's rows [4 b, 4 b + 4) (x (rows, 256)).
Kernel partial_sum_kernel() {
  dsl::KernelBuilder k("partial_sum", /*threads=*/128);
  k.programmatic_launch(); // waits at its start: x may come from the kernel
                           // before it
  auto x = k.tensor("x", DType::f32, 2);
  auto partial = k.tensor("partial", DType::f32, 1);
  k.grid({k.blocks(x, 0, kRows)});
  auto b = k.block_id(0);
  auto tile = k.load(x, {b * k.index(kRows), k.index(0)}, {kRows, kCols});
  k.store(k.reshape(k.reduce_sum(k.reduce_sum(tile, 1), 0), {1}), partial, {b});
  return k.build();
}

// out = x^2 / sum(partial) (sum(partial) over `blocks` <= 128 values, a
// value a thread).
Kernel scale_kernel() {
  dsl::KernelBuilder k("scale", /*threads=*/128);
  k.programmatic_launch();
  auto x = k.tensor("x", DType::f32, 2);
  auto partial = k.tensor("partial", DType::f32, 1);
  auto out = k.tensor("out", DType::f32, 2);
  k.grid({k.blocks(x, 0, kRows)});
  auto row = k.block_id(0) * k.index(kRows), zero = k.index(0);
  // Before the wait: the op's input, while partial_sum finishes.
  auto tile = k.load(x, {row, zero}, {kRows, kCols});
  auto squared = tile * tile;
  k.grid_wait();
  // After: what partial_sum wrote.
  auto total = k.reduce_sum(k.load(partial, {zero}, {128}), 0);
  k.store(squared / k.broadcast(k.reshape(total, {1, 1}), {kRows, kCols}), out,
          {row, zero});
  return k.build();
}

int main() {
  CompiledKernel first = compile(partial_sum_kernel());
  CompiledKernel second = compile(scale_kernel());
  auto at = [](const std::string &ptx, const char *what, size_t from = 0) {
    return ptx.find(what, from);
  };
  const std::string &ptx = second.ptx;
  const size_t wait = at(ptx, "griddepcontrol.wait;");
  const size_t first_load = at(ptx, "ld.global");
  const size_t load_after = at(ptx, "ld.global", wait);
  const size_t dependents = at(ptx, "griddepcontrol.launch_dependents;");
  const size_t first_store = at(ptx, "st.global");
  std::printf("partial_sum: programmatic %s, waits at its start: %s\n",
              first.abi.programmatic ? "yes" : "no",
              at(first.ptx, "griddepcontrol.wait;") < at(first.ptx, "ld.global")
                  ? "yes"
                  : "no");
  std::printf(
      "scale: programmatic %s; x loaded before the wait: %s; partial "
      "loaded after it: %s; the kernel after launched after the "
      "wait: %s; stores after it: %s\n",
      second.abi.programmatic ? "yes" : "no", first_load < wait ? "yes" : "no",
      load_after != std::string::npos ? "yes" : "no",
      dependents > wait && dependents != std::string::npos ? "yes" : "no",
      first_store > wait && first_store != std::string::npos ? "yes" : "no");
  if (!first.abi.programmatic || !second.abi.programmatic ||
      wait == std::string::npos || first_load > wait ||
      load_after == std::string::npos || dependents < wait ||
      dependents == std::string::npos || first_store < wait)
    return 1;
  std::printf("%s\n", scale_kernel().tile_ir().c_str());
  return 0;
}
