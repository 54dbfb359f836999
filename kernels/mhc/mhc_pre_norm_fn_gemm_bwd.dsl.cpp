// mhc_pre_norm_fn_gemm_bwd.dsl.cpp - the GEMM half of mHC's norm backward
// in the tile DSL, two kernels of mma.sync on tf32 (k.gemm on shared
// tiles), f32 operands rounded to the nearest tf32, ties away
// (dsl::Tf32::rounded, as the original's 0x1000 added to the f32 bits), x
// exact (bf16, multiplied as it is). x_grad: a block x_tokens tokens x 64
// columns, x_grad (or 0) + mgr . fnr (K = the 32 mixes, 24 .. 31 zero, the
// product from zero) + 2 x sqrsum_grad (a value a token), bf16, its
// streams loaded before the product. fn_grad: a block 64
// columns, mgr^T . x summed over the tokens in steps of 64, each step's product
// from zero (the carried sum stays out of the mma's shared-memory round trip);
// each step's tiles transposed through registers, or (stages) copied ahead
// as they lie and multiplied transposed; the tokens in fn_splits parts (a
// grid row each) whose sums go to the scratch, added up in order by a third
// kernel (fn_grad_sum).
#include "mhc/mhc_pre_norm_fn_gemm_bwd.h"

#include "tilejit/compiler/dsl.h"

#include <algorithm>
#include <optional>
#include <vector>

namespace tilejit::mhc {

namespace {

constexpr int64_t kMixes = 32, kCols = 64;

/// The x_grad kernels' tensors, in their parameter order.
struct XGradTensors {
  dsl::Tensor mul_grad; ///< (T, M3)
  dsl::Tensor sq_grad;  ///< (T, Kd), column stride 0
  dsl::Tensor x;        ///< (T, Kd)
  dsl::Tensor fn;       ///< (M3, Kd)
  std::optional<dsl::Tensor> x_grad;
  dsl::Tensor out;
};

XGradTensors x_grad_tensors(dsl::KernelBuilder &k, const MhcNormFnBwdSpec &s,
                            dsl::Access mul_grad_access) {
  const auto f32 = DType::f32, bf16 = DType::bf16;
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto mul_grad = k.tensor("out_mul_grad", f32, 2, mul_grad_access);
  auto sq_grad = k.tensor("sqrsum_grad_rows", f32, 2);
  auto x = k.tensor("residual_rows", bf16, 2, access);
  auto fn = k.tensor("fn", f32, 2, access);
  std::optional<dsl::Tensor> x_grad;
  if (s.accumulate)
    x_grad = k.tensor("x_grad_rows", bf16, 2, access);
  auto out = k.tensor("x_grad_out_rows", bf16, 2, access);
  return {mul_grad, sq_grad, x, fn, x_grad, out};
}

/// sqrsum_grad of `tokens` tokens from t0, (tokens, 1): its rows have
/// stride 0, a value a token (one a thread: with fewer tokens than
/// threads, as many copies of it, taken back to one by a max).
dsl::Value token_sq_grad(dsl::KernelBuilder &k, const dsl::Tensor &sq_grad,
                         dsl::Value t0, dsl::Value c0, int64_t tokens) {
  const int64_t copies = std::max<int64_t>(1, 128 / tokens);
  auto rows = k.relayout(k.load(sq_grad, {t0, c0}, {tokens, copies}), 1);
  if (copies > 1)
    rows = k.reshape(k.reduce_max(rows, 1), {tokens, 1});
  return rows;
}

/// x_grad in x_steps steps of x_tokens tokens a block (spec x_steps > 0):
/// fn's tile stored into shared memory once as it lies (multiplied
/// transposed), each step's out_mul_grad, x and x_grad tiles copied
/// (cp.async) stages - 1 steps ahead, the streams read back from shared
/// memory in the layout the sum takes.
Kernel x_grad_steps_kernel(const MhcNormFnBwdSpec &s) {
  using dsl::Value;
  const int64_t tokens = s.x_tokens;
  dsl::KernelBuilder k("mhc_pre_norm_fn_x_grad", 128);
  k.programmatic_launch();
  const auto f32 = DType::f32, bf16 = DType::bf16;
  auto [mul_grad, sq_grad, x, fn, x_grad, out] =
      x_grad_tensors(k, s, dsl::inner_contiguous(s.mul_grad_bytes));
  const int64_t span = tokens * s.x_steps;
  k.grid({k.blocks(x, 0, span), k.blocks(x, 1, kCols)});
  auto first = k.block_id(0) * k.index(span);
  auto c0 = k.block_id(1) * k.index(kCols), zero = k.index(0);
  // Steps of this block: those of its span that start inside the tokens.
  auto left = (k.dim(x, 0) - first + k.index(tokens - 1)) / k.index(tokens);
  auto count = k.min(k.index(s.x_steps), left);
  const std::vector<int64_t> box = {tokens, kCols};
  // fn's tile as it lies (K = the mixes, the rows; M3 .. 31 read as 0),
  // multiplied transposed.
  auto sb = k.alloc_shared(f32, {kMixes, kCols});
  k.store(k.load(fn, {zero, c0}, {kMixes, kCols}), sb, {zero, zero});
  k.barrier();
  auto sa = k.alloc_shared(f32, {tokens, kMixes});
  auto sx = k.alloc_shared(bf16, {tokens, kCols});
  std::optional<Value> sxg;
  if (x_grad)
    sxg = k.alloc_shared(bf16, {tokens, kCols});
  k.pipelined(count, std::max<int32_t>(2, s.stages), {},
              [&](Value i, std::vector<Value>) {
                auto t0 = first + i * k.index(tokens);
                // mixes M3 .. 31 copied as zeros.
                k.copy(mul_grad, {t0, zero}, sa);
                k.copy(x, {t0, c0}, sx);
                if (x_grad)
                  k.copy(*x_grad, {t0, c0}, *sxg);
                auto sq_rows = token_sq_grad(k, sq_grad, t0, c0, tokens);
                Value acc =
                    k.gemm(sa, sb, k.full(box, 0, f32),
                           {.tf32 = dsl::Tf32::rounded, .transpose_b = true});
                if (sxg)
                  acc = k.cast(k.load(*sxg, {zero, zero}, box), f32) + acc;
                acc = acc + k.constant(2, f32) *
                                k.cast(k.load(sx, {zero, zero}, box), f32) *
                                k.broadcast(sq_rows, box);
                k.store(k.cast(acc, bf16), out, {t0, c0});
                return std::vector<Value>{};
              });
  return k.build();
}

} // namespace

Kernel mhc_pre_norm_fn_x_grad_kernel(const MhcNormFnBwdSpec &s) {
  using dsl::Value;
  if (s.x_steps > 0)
    return x_grad_steps_kernel(s);
  const int64_t tokens = s.x_tokens;
  dsl::KernelBuilder k("mhc_pre_norm_fn_x_grad", 128);
  k.programmatic_launch();
  const auto f32 = DType::f32, bf16 = DType::bf16;
  auto [mul_grad, sq_grad, x, fn, x_grad, out] =
      x_grad_tensors(k, s, dsl::Access{});
  k.grid({k.blocks(x, 0, tokens), k.blocks(x, 1, kCols)});
  auto t0 = k.block_id(0) * k.index(tokens);
  auto c0 = k.block_id(1) * k.index(kCols), zero = k.index(0);
  const std::vector<int64_t> box = {tokens, kCols};
  // The tile's streams first, in flight while the product is formed.
  // 8 consecutive elements a thread: 16-byte accesses of the bf16 streams
  // (the f32 product's layout would take 4).
  std::optional<Value> xg;
  if (x_grad)
    xg = k.relayout(k.load(*x_grad, {t0, c0}, box), 8);
  auto xv = k.relayout(k.load(x, {t0, c0}, box), 8);
  auto sq = k.broadcast(token_sq_grad(k, sq_grad, t0, c0, tokens), box);
  auto sa = k.alloc_shared(f32, {tokens, kMixes});
  auto sb = k.alloc_shared(f32, {kCols, kMixes});
  // mul_grad's rows need not be aligned: one element a thread, in a layout
  // of its own, so that x's and x_grad's accesses keep wide vectors.
  k.store(k.relayout(k.load(mul_grad, {t0, zero}, {tokens, kMixes}), 1), sa,
          {zero, zero});
  k.store(k.transpose(k.load(fn, {zero, c0}, {kMixes, kCols})), sb,
          {zero, zero});
  k.barrier();
  // The product from zero (no trip of x_grad through shared memory into
  // the mma), then x_grad + product + 2 x sqrsum_grad in f32.
  Value acc = k.gemm(sa, sb, k.full(box, 0, f32), dsl::Tf32::rounded);
  if (xg)
    acc = k.cast(*xg, f32) + acc;
  acc = acc + k.constant(2, f32) * k.cast(xv, f32) * sq;
  k.store(k.cast(acc, bf16), out, {t0, c0});
  return k.build();
}

Kernel mhc_pre_norm_fn_fn_grad_kernel(const MhcNormFnBwdSpec &s) {
  using dsl::Value;
  constexpr int64_t tokens = 64;
  dsl::KernelBuilder k("mhc_pre_norm_fn_fn_grad", 128);
  k.programmatic_launch();
  const auto f32 = DType::f32, bf16 = DType::bf16;
  const bool pipelined = s.stages > 0;
  // Copied, mul_grad's rows are contiguous (the op's declaration); loaded,
  // they need not be aligned (one element a thread, in a layout of its own,
  // so that x's loads keep wide vectors).
  auto mul_grad = k.tensor("out_mul_grad", f32, 2,
                           pipelined ? dsl::inner_contiguous(s.mul_grad_bytes)
                                     : dsl::Access{}); // (T, M3)
  auto x = k.tensor("residual_rows", bf16, 2,
                    dsl::vectors_of(s.vector_bytes)); // (T, Kd)
  auto scratch = k.tensor("scratch", f32, 3);         // (splits, 32, Kd)
  k.grid({k.blocks(x, 1, kCols), dsl::Extent(s.fn_splits)});
  auto c0 = k.block_id(0) * k.index(kCols), zero = k.index(0);
  // Split b of the token steps: steps first .. first + count - 1.
  auto steps = (k.dim(x, 0) + k.index(tokens - 1)) / k.index(tokens);
  auto per = (steps + k.index(s.fn_splits - 1)) / k.index(s.fn_splits);
  auto first = k.min(k.block_id(1) * per, steps);
  auto count = k.min(per, steps - first);
  auto none = k.full({kMixes, kCols}, 0, f32);
  Value acc;
  if (pipelined) {
    // The tiles as they lie (K = the tokens, the rows), copied ahead and
    // multiplied transposed; mixes M3 .. 31 copied as zeros.
    auto sa = k.alloc_shared(f32, {tokens, kMixes});
    auto sb = k.alloc_shared(bf16, {tokens, kCols});
    const dsl::GemmOptions transposed{
        .tf32 = dsl::Tf32::rounded, .transpose_a = true, .transpose_b = true};
    acc = k.pipelined(count, s.stages, {none},
                      [&](Value i, std::vector<Value> carried) {
                        auto t0 = (first + i) * k.index(tokens);
                        k.copy(mul_grad, {t0, zero}, sa);
                        k.copy(x, {t0, c0}, sb);
                        return std::vector<Value>{
                            carried[0] + k.gemm(sa, sb, none, transposed)};
                      })[0];
  } else {
    auto sa = k.alloc_shared(f32, {kMixes, tokens});
    auto sb = k.alloc_shared(bf16, {kCols, tokens});
    acc =
        k.serial(zero, count, {none}, [&](Value i, std::vector<Value> carried) {
          auto t0 = (first + i) * k.index(tokens);
          auto a = k.transpose(
              k.relayout(k.load(mul_grad, {t0, zero}, {tokens, kMixes}), 1));
          auto b = k.transpose(k.load(x, {t0, c0}, {tokens, kCols}));
          k.barrier(); // the last step's gemm has read the tiles
          k.store(a, sa, {zero, zero});
          k.store(b, sb, {zero, zero});
          k.barrier();
          return std::vector<Value>{carried[0] +
                                    k.gemm(sa, sb, none, dsl::Tf32::rounded)};
        })[0];
  }
  // The split's sums, all 32 mixes (M3 .. 31 zero), for the sum kernel.
  k.store(k.relayout(k.reshape(acc, {1, kMixes, kCols}), 1), scratch,
          {k.block_id(1), zero, c0});
  return k.build();
}

Kernel mhc_pre_norm_fn_fn_grad_sum_kernel(const MhcNormFnBwdSpec &s) {
  using dsl::Value;
  constexpr int64_t cols = 1024;
  dsl::KernelBuilder k("mhc_pre_norm_fn_fn_grad_sum", 128);
  k.programmatic_launch();
  const auto f32 = DType::f32;
  auto scratch = k.tensor("scratch", f32, 3, dsl::vectors_of(s.fn_grad_bytes));
  auto fn_grad = k.tensor("fn_grad", f32, 2, dsl::vectors_of(s.fn_grad_bytes));
  k.grid({k.blocks(fn_grad, 0, 1), k.blocks(fn_grad, 1, cols)});
  auto row = k.block_id(0), c0 = k.block_id(1) * k.index(cols);
  // The splits' partial sums in order (every load in flight at once).
  std::vector<Value> parts;
  for (int32_t i = 0; i < s.fn_splits; ++i)
    parts.push_back(k.load(scratch, {k.index(i), row, c0}, {1, 1, cols}));
  Value sum = parts[0];
  for (size_t i = 1; i < parts.size(); ++i)
    sum = sum + parts[i];
  k.store(k.reshape(sum, {1, cols}), fn_grad, {row, c0});
  return k.build();
}

} // namespace tilejit::mhc
