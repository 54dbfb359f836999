// lesson_05_small_gemm.cpp - Tutorial 5: a small matrix product inside an
// ordinary kernel, and per-thread arrays. Built and run by the tests.
//
// Part 1 is the forward of mHC's RMS-norm projection (shared/specs/
// moe_engram_mhc.md §3.3): out[t, j] = (sum_k x[t, k] fn[j, k]) *
// rsqrt(sum_k x[t, k]^2 / K + eps), 32 tokens a block, K in chunks. Each
// chunk goes to shared tiles and into k.gemm. Outside a `pipelined` main
// loop a gemm is warp-level mma.sync (here m16n8k8 on f32 operands, which
// the tensor core reads as tf32), and it mixes freely with element-wise work
// and reductions: the sum of squares rides in the same loop.
//
// Part 2 keeps a row of 8 values in each thread (k.relayout(f, 8)) and reads
// and writes it at positions known only at run time (k.take / k.put):
// TileLang's alloc_local arrays. Both stay in registers.
#include "tilejit/compiler/compile.h"
#include "tilejit/compiler/dsl.h"

#include <cstdio>
#include <string>

using namespace tilejit;

// out (N, 24) = (x (N, K) bf16 . fn (24, K)^T) * rsqrt(mean(x^2) + eps).
Kernel norm_fn_kernel() {
  using Values = std::vector<dsl::Value>;
  constexpr int tokens = 32, chunk = 128, mixes = 32; // 24 used
  dsl::KernelBuilder k("norm_fn_fwd", /*threads=*/128);
  auto x = k.tensor("x", DType::bf16, 2, dsl::inner_contiguous(16));
  auto fn = k.tensor("fn", DType::f32, 2, dsl::inner_contiguous(16));
  // 16-byte rows everywhere: 16-byte accesses, so a row's sum of squares
  // stays within a warp (with element accesses it would cross warps).
  auto out = k.tensor("out", DType::f32, 2, dsl::inner_contiguous(16));
  auto t0 = k.block_id(0) * k.index(tokens);
  auto kd = k.dim(x, 1);
  auto chunks = (kd + k.index(chunk - 1)) / k.index(chunk);
  auto sx = k.alloc_shared(DType::f32, {tokens, chunk});
  auto sfn = k.alloc_shared(DType::f32, {mixes, chunk}); // rows 24..31 read 0
  auto zero = k.index(0);

  auto sums = k.serial(
      zero, chunks,
      {k.full({tokens, mixes}, 0.0, DType::f32),
       k.full({tokens, 1}, 0.0, DType::f32)},
      [&](dsl::Value i, Values c) {
        auto c0 = i * k.index(chunk);
        auto xt = k.cast(k.load(x, {t0, c0}, {tokens, chunk}), DType::f32);
        k.barrier(); // the last chunk's gemm has read the tiles
        k.store(xt, sx, {zero, zero});
        k.store(k.load(fn, {zero, c0}, {mixes, chunk}), sfn, {zero, zero});
        k.barrier();
        return Values{k.gemm(sx, sfn, c[0]), c[1] + k.reduce_sum(xt * xt, 1)};
      });
  auto rms =
      k.rsqrt(sums[1] / k.cast(kd, DType::f32) + k.constant(1e-6, DType::f32));
  k.store(sums[0] * rms, out, {t0, zero}); // columns 24..31 are dropped
  return k.build();
}

// out[r, :] = x[r, :] with its largest element moved to the front and the
// others shifted right, one row of 8 a thread (128 rows a block).
Kernel max_to_front_kernel() {
  using Values = std::vector<dsl::Value>;
  constexpr int rows = 128, n = 8;
  dsl::KernelBuilder k("max_to_front", /*threads=*/128);
  auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
  auto out = k.tensor("out", DType::f32, 2, dsl::inner_contiguous(16));
  auto r0 = k.block_id(0) * k.index(rows);
  auto zero = k.index(0);
  auto row = k.relayout(k.load(x, {r0, zero}, {rows, n}), n); // a row a thread
  // The position of each row's maximum (the first one), a run-time value.
  auto m = k.reduce_max(row, 1);
  auto at = k.reduce_min(k.select(k.eq(row, m), k.iota({rows, n}, 1),
                                  k.full({rows, n}, n, DType::i32)),
                         1);
  // Shift right by one up to `at`, then put the maximum in front.
  auto shifted =
      k.serial(zero, k.index(n - 1), {row}, [&](dsl::Value i, Values c) {
        auto j = k.index(n - 1) - i; // n-1 .. 1
        auto moved =
            k.select(k.le(k.cast(j, DType::i32), at),
                     k.take(row, 1, j - k.index(1)), k.take(c[0], 1, j));
        return Values{k.put(c[0], 1, j, moved)};
      })[0];
  k.store(k.put(shifted, 1, zero, m), out, {r0, zero});
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
  CompiledKernel gemm = compile(norm_fn_kernel());
  size_t mma = count(gemm.ptx, "mma.sync.aligned.m16n8k8.row.col.f32.tf32");
  std::printf("norm_fn_fwd: %zu mma.sync in the PTX, wgmma: %s\n", mma,
              gemm.ptx.find("wgmma") == std::string::npos ? "no" : "yes");
  CompiledKernel local = compile(max_to_front_kernel());
  std::printf("max_to_front: shuffles %zu, local memory %zu, barriers %zu\n",
              count(local.ptx, "shfl.sync"), count(local.ptx, "ld.local"),
              count(local.ptx, "bar.sync"));
  if (mma == 0 || gemm.ptx.find("wgmma") != std::string::npos ||
      count(local.ptx, "shfl.sync") + count(local.ptx, "ld.local") +
              count(local.ptx, "bar.sync") !=
          0)
    return 1;
  std::printf("%s\n", max_to_front_kernel().tile_ir().c_str());
  return 0;
}
