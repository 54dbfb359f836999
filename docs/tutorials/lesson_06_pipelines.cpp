// lesson_06_pipelines.cpp - Tutorial 6: loops whose copies run ahead, and a
// gemm with its epilogue fused. Built and run by the tests.
//
// Part 1 sums the columns of a matrix in chunks of 64, each chunk copied
// into a shared tile by k.copy inside k.pipelined. With 3 stages the copy
// of chunk k + 2 is in flight while the body reads chunk k: the compiler
// gives the tile 3 buffers, issues each thread's 16-byte cp.async pieces
// ahead, and orders them with cp.async group waits and one barrier a step
// (tile-lower-pipelined; docs/tile-dialect.md). The body needs no barrier.
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

// out (rows, 64) f32: out[r, j] = sum over c of x[r, 64 c + j].
Kernel chunk_sum_kernel() {
  dsl::KernelBuilder k("chunk_sum", /*threads=*/128);
  auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
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
  CompiledKernel sum = compile(chunk_sum_kernel());
  const size_t pieces = count(sum.ptx, "cp.async.cg.shared.global"),
               waits = count(sum.ptx, "cp.async.wait_group");
  std::printf("chunk_sum: %zu cp.async pieces issued, %zu group waits, "
              "%zu barriers\n",
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
  if (pieces == 0 || waits == 0 ||
      gemm.ptx.find("wgmma.mma_async") == std::string::npos ||
      gemm.abi.args.size() != 8 + 1 + 4 + 4)
    return 1;
  return 0;
}
