// lesson_04_loops.cpp - Tutorial 4: loops at run time. A softmax over rows
// of any length, one 256-column chunk at a time. Built and run by the tests.
//
// k.serial(lo, hi, init, body) is a loop in the kernel: every thread runs it,
// `body(i, carried)` returns the next carried values. Here the first loop
// carries each row's running maximum and running sum of exponentials (the
// "online softmax": when the maximum grows, the sum is rescaled), the second
// writes exp(x - max) / sum. The carried values are reduction results, so
// they keep the reduction's layout: each thread holds the maximum and sum of
// the rows it holds elements of, and broadcasting them back is free.
#include "tilejit/compiler/compile.h"
#include "tilejit/compiler/dsl.h"

#include <cstdio>
#include <limits>
#include <string>

using namespace tilejit;

// out[r, :] = softmax(x[r, :]) for 8 rows a block and any number of columns.
Kernel long_softmax_kernel() {
  using Values = std::vector<dsl::Value>;
  constexpr int rows = 8, chunk = 256;
  dsl::KernelBuilder k("long_softmax", /*threads=*/256);
  auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
  auto out = k.tensor("out", DType::f32, 2, dsl::inner_contiguous(16));
  const float inf = std::numeric_limits<float>::infinity();

  auto row = k.block_id(0) * k.index(rows);
  auto cols = k.dim(x, 1);
  auto chunks = (cols + k.index(chunk - 1)) / k.index(chunk);
  // Columns past the end read 0 (bounds-checked loads); they must not count
  // in the maximum, so they become -inf.
  auto load_chunk = [&](dsl::Value i) {
    auto c0 = i * k.index(chunk);
    auto t = k.load(x, {row, c0}, {rows, chunk});
    auto col = k.iota({rows, chunk}, 1) +
               k.cast(c0, DType::i32); // each element's column
    auto inside = k.lt(col, k.cast(cols, DType::i32));
    return std::pair{
        c0, k.select(inside, t, k.full({rows, chunk}, -inf, DType::f32))};
  };

  auto init = Values{k.full({rows, 1}, -inf, DType::f32),
                     k.full({rows, 1}, 0.0, DType::f32)};
  auto stats = k.serial(k.index(0), chunks, init, [&](dsl::Value i, Values c) {
    auto [c0, t] = load_chunk(i);
    auto m = k.max(c[0], k.reduce_max(t, 1));
    auto rescale = k.exp(c[0] - m); // exp(-inf) = 0 on the first chunk
    auto s = c[1] * rescale + k.reduce_sum(k.exp(t - m), 1);
    return Values{m, s};
  });
  k.serial(k.index(0), chunks, {}, [&](dsl::Value i, Values) {
    auto [c0, t] = load_chunk(i);
    k.store(k.exp(t - stats[0]) / stats[1], out, {row, c0});
    return Values{};
  });
  return k.build();
}

int main() {
  CompileOptions options;
  options.keep = {Stage::gpu};
  CompiledKernel compiled = compile(long_softmax_kernel(), options);
  // Two loops in the kernel; the first carries two per-thread vectors.
  const std::string &gpu = compiled.stages.at(Stage::gpu);
  size_t loops = 0;
  for (size_t at = gpu.find("scf.for"); at != std::string::npos;
       at = gpu.find("scf.for", at + 1))
    ++loops;
  bool carried = gpu.find("iter_args") != std::string::npos;
  std::printf("loops in the kernel: %zu, carrying values: %s\n", loops,
              carried ? "yes" : "no");
  if (loops != 2 || !carried ||
      compiled.ptx.find("bra.uni") == std::string::npos)
    return 1;
  std::printf("%s\n", long_softmax_kernel().tile_ir().c_str());
  return 0;
}
