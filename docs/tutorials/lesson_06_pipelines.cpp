// lesson_06_pipelines.cpp - Tutorial 6: loops whose copies run ahead, and a
// gemm with its epilogue fused. Built and run by the tests.
//
// Part 1 sums the columns of a matrix in chunks of 64, each chunk copied
// into a shared tile by k.copy inside k.pipelined. With 3 stages the copy
// of chunk k + 2 is in flight while the body reads chunk k: the compiler
// gives the tile 3 buffers and orders copies and reads with one barrier a
// step (tile-lower-pipelined; docs/tile-dialect.md). The body needs no
// barrier. With x's rows promised 16-byte aligned each chunk is one TMA
// copy, issued by one thread and awaited on an mbarrier a stage (the kernel
// takes a tensor map of x as a launch argument of its own); promised less,
// every thread issues cp.async pieces and waits for their groups.
//
// Part 2 is the gemm of lesson 3 with an epilogue written as ordinary tile
// ops after the loop: out = bf16(alpha * scale[r] * (a . b^T) + bias[c]).
// The TMA + WGMMA kernel evaluates it on each accumulator element before
// its stores; alpha, scale and bias become parameters of the kernel.
#include "tilejit/compiler/compile.h"
#include "tilejit/compiler/dsl.h"

#include <cstdio>
#include <string>

using namespace tilejit;

// out (rows, 64) f32: out[r, j] = sum over c of x[r, 64 c + j]; x's rows
// promised aligned to `align` bytes.
Kernel chunk_sum_kernel(int align) {
  dsl::KernelBuilder k("chunk_sum", /*threads=*/128);
  auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(align));
  auto out = k.tensor("out", DType::f32, 2);
  auto zero = k.index(0), row = k.block_id(0) * k.index(32);
  auto tile = k.alloc_shared(DType::f32, {32, 64});
  auto chunks = (k.dim(x, 1) + k.index(63)) / k.index(64);
  auto sum =
      k.pipelined(chunks, /*stages=*/3, {k.full({32, 64}, 0, DType::f32)},
                  [&](dsl::Value step, std::vector<dsl::Value> acc) {
                    // Zeros past the last column.
                    k.copy(x, {row, step * k.index(64)}, tile);
                    auto chunk = k.load(tile, {zero, zero}, {32, 64});
                    return std::vector{acc[0] + chunk};
                  });
  k.store(sum[0], out, {row, zero});
  return k.build();
}

// c (M, N) bf16 = bf16(alpha * scale[r] * (a . b^T)[r, c] + bias[c]) for
// a (M, K), b (N, K) bf16, scale (M, 1) and bias (1, N) f32.
Kernel fused_gemm_kernel() {
  constexpr int64_t bm = 128, bn = 128, bk = 64;
  dsl::KernelBuilder k("fused_gemm", /*threads=*/384);
  auto a = k.tensor("a", DType::bf16, 2, dsl::inner_contiguous(16));
  auto b = k.tensor("b", DType::bf16, 2, dsl::inner_contiguous(16));
  auto c = k.tensor("c", DType::bf16, 2, dsl::inner_contiguous(4));
  auto scale = k.tensor("scale", DType::f32, 2);
  auto bias = k.tensor("bias", DType::f32, 2);
  auto alpha = k.scalar("alpha", DType::f32);
  k.grid({k.blocks(a, 0, bm), k.blocks(b, 0, bn)});
  auto m0 = k.block_id(0) * k.index(bm), n0 = k.block_id(1) * k.index(bn);
  auto zero = k.index(0);
  auto sa = k.alloc_shared(DType::bf16, {bm, bk});
  auto sb = k.alloc_shared(DType::bf16, {bn, bk});
  auto steps = (k.dim(a, 1) + k.index(bk - 1)) / k.index(bk);
  auto acc = k.pipelined(steps, /*stages=*/4, {k.full({bm, bn}, 0, DType::f32)},
                         [&](dsl::Value step, std::vector<dsl::Value> carried) {
                           k.copy(a, {m0, step * k.index(bk)}, sa);
                           k.copy(b, {n0, step * k.index(bk)}, sb);
                           return std::vector{k.gemm(sa, sb, carried[0])};
                         })[0];
  // The epilogue: a value a row, a value a column, a scalar.
  auto rows = k.broadcast(k.load(scale, {m0, zero}, {bm, 1}), {bm, bn});
  auto cols = k.broadcast(k.load(bias, {zero, n0}, {1, bn}), {bm, bn});
  k.store(k.cast(acc * rows * alpha + cols, DType::bf16), c, {m0, n0});
  return k.build();
}

static size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1))
    ++n;
  return n;
}

int main() {
  CompiledKernel tma = compile(chunk_sum_kernel(16));
  const size_t copies = count(tma.ptx, "cp.async.bulk.tensor.2d"),
               mbarrier_waits = count(tma.ptx, "mbarrier.try_wait.parity");
  std::printf("chunk_sum, rows 16-byte aligned: %zu TMA copies issued, %zu "
              "mbarrier waits, %zu barriers; launch arguments:",
              copies, mbarrier_waits, count(tma.ptx, "bar.sync"));
  for (const AbiArg &arg : tma.abi.args)
    std::printf(" %s %s", std::string(name_of(arg.kind)).c_str(),
                arg.name.c_str());
  std::printf("\n");
  CompiledKernel sum = compile(chunk_sum_kernel(4));
  const size_t pieces = count(sum.ptx, "cp.async.ca.shared.global"),
               waits = count(sum.ptx, "cp.async.wait_group");
  std::printf("chunk_sum, rows 4-byte aligned: %zu cp.async pieces issued, "
              "%zu group waits, %zu barriers\n",
              pieces, waits, count(sum.ptx, "bar.sync"));
  CompiledKernel gemm = compile(fused_gemm_kernel());
  // The gemm's own 8 parameters: a's and b's tensor maps, c, M, N, K, c's
  // row stride, the tiles the persistent kernel walks.
  std::printf("fused_gemm: wgmma %s, %zu parameters after the gemm's 8:",
              gemm.ptx.find("wgmma.mma_async") == std::string::npos ? "no"
                                                                    : "yes",
              gemm.abi.args.size() - 8);
  for (size_t i = 8; i < gemm.abi.args.size(); ++i)
    std::printf(" %s", gemm.abi.args[i].name.c_str());
  std::printf("\n");
  if (copies == 0 || mbarrier_waits == 0 || tma.abi.args.size() != 3 ||
      pieces == 0 || waits == 0 ||
      gemm.ptx.find("wgmma.mma_async") == std::string::npos ||
      gemm.abi.args.size() != 8 + 1 + 4 + 4)
    return 1;
  return 0;
}
