// dsl_pipelined_gpu_test.cpp - k.pipelined outside the gemm template on the
// GPU (tile-lower-pipelined: cp.async or TMA copies issued stages ahead):
// sums of column chunks (f32, bf16; 1 to 4 stages; tensors whose rows and
// columns end inside a tile, read as zeros) and an mma.sync gemm on 128
// threads whose K chunks are copied ahead (bf16, tf32; K not a multiple of
// the chunk), each against the same sums on the CPU.
#include "dsl_gpu.h"

#include "common/abi.h"
#include "common/convert.h"
#include "common/jit.h"
#include "op/typed_op.h"

#include "tilejit/compiler/dsl.h"
#include "tilejit/runtime/buffer.h"
#include "tilejit/runtime/launch.h"
#include "tilejit/runtime/stream.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace tilejit;
using namespace tilejit::dsl_gpu;

namespace {

/// `v` in `dtype`'s bytes (f32 or bf16; small integers are exact in both).
std::vector<uint8_t> encode(const std::vector<float> &v, DType dtype) {
  std::vector<uint8_t> raw(v.size() * size_of(dtype));
  for (size_t i = 0; i < v.size(); ++i) {
    if (dtype == DType::f32) {
      std::memcpy(&raw[i * 4], &v[i], 4);
    } else {
      uint16_t h = ref::f32_to_bf16(v[i]);
      std::memcpy(&raw[i * 2], &h, 2);
    }
  }
  return raw;
}

/// Launches `kernel` by its ABI with `args` and an f32 "out" of
/// `out_shape` in `dout`, waits, and reads it back into `out`.
void launch_into(const ops::LoadedKernel &kernel, ops::KernelArgs &args,
                 const std::string &name, rt::DeviceBuffer &dout,
                 std::vector<float> &out, const int64_t (&out_shape)[2]) {
  args.tensor("out",
              rt::TensorView::contiguous(dout.ptr(), DType::f32, out_shape));
  ops::launch_kernel(kernel, args, name, nullptr);
  rt::synchronize(nullptr);
  dout.download(out.data(), out.size() * 4);
}

struct SumCase {
  DType dtype;
  int stages;
  int64_t rows, cols;      // the tensor
  int64_t block_rows = 32; // tiles of block_rows x 64
  /// x's rows promised aligned to this many bytes: 16 (and two or more
  /// stages) copies with TMA, less with cp.async.
  int align = 16;
};

/// out[r, j] = sum over chunks c of x[r, 64 c + j]: each chunk through a
/// shared tile copied stages ahead.
Kernel sum_kernel(const SumCase &c) {
  const int64_t rows = c.block_rows;
  dsl::KernelBuilder k("pipelined_sum", 128);
  auto x = k.tensor("x", c.dtype, 2, dsl::inner_contiguous(c.align));
  auto out = k.tensor("out", DType::f32, 2);
  k.grid({k.blocks(out, 0, rows)});
  auto zero = k.index(0), row = k.block_id(0) * k.index(rows);
  auto tile = k.alloc_shared(c.dtype, {rows, 64});
  auto count = (k.dim(x, 1) + k.index(63)) / k.index(64);
  auto sum =
      k.pipelined(count, c.stages, {k.full({rows, 64}, 0, DType::f32)},
                  [&](dsl::Value step, std::vector<dsl::Value> acc) {
                    k.copy(x, {row, step * k.index(64)}, tile);
                    auto chunk = k.load(tile, {zero, zero}, {rows, 64});
                    return std::vector{acc[0] + k.cast(chunk, DType::f32)};
                  });
  k.store(sum[0], out, {row, zero});
  return k.build();
}

void run_sum(const SumCase &c) {
  const std::string name =
      "test_pipelined_sum_" + std::string(name_of(c.dtype)) + "_" +
      std::to_string(c.stages) + "_" + std::to_string(c.block_rows) + "_" +
      std::to_string(c.align);
  const ops::LoadedKernel &kernel =
      ops::load_kernel(ops::make_key(name), [&] { return sum_kernel(c); });
  // The copies' path: a tensor map argument bound to x, or none.
  const bool tma = c.align == 16 && c.stages >= 2;
  REQUIRE((kernel.abi.args.back().kind == AbiArg::Kind::tensor_map) == tma);
  std::vector<float> x = test_values(c.rows * c.cols, true, c.stages);
  std::vector<uint8_t> raw = encode(x, c.dtype);
  const int64_t out_rows =
      (c.rows + c.block_rows - 1) / c.block_rows * c.block_rows;
  // Poison: rows past the tensor's end must be written (as sums of zeros).
  std::vector<float> out(out_rows * 64, -7.0f);
  rt::DeviceBuffer dx(std::max<size_t>(raw.size(), 16)), dout(out.size() * 4);
  if (!raw.empty())
    dx.upload(raw.data(), raw.size());
  dout.upload(out.data(), out.size() * 4);
  const int64_t x_shape[2] = {c.rows, c.cols}, out_shape[2] = {out_rows, 64};
  ops::KernelArgs args;
  args.tensor("x", rt::TensorView::contiguous(dx.ptr(), c.dtype, x_shape));
  launch_into(kernel, args, name, dout, out, out_shape);
  size_t bad = 0;
  for (int64_t r = 0; r < out_rows; ++r)
    for (int64_t j = 0; j < 64; ++j) {
      float want = 0;
      for (int64_t col = j; r < c.rows && col < c.cols; col += 64)
        want += x[r * c.cols + col];
      if (out[r * 64 + j] != want && bad++ < 5)
        UNSCOPED_INFO(name << " " << c.rows << " x " << c.cols << " row " << r
                           << " col " << j << ": " << out[r * 64 + j]
                           << ", want " << want);
    }
  CHECK(bad == 0);
}

struct GemmCase {
  DType dtype;
  int stages;
  int64_t k; // K; chunks of 32 (tf32) or 64 (bf16)
};

/// out (rows x 32) = a (rows x K) * b (32 x K)^T, 32 rows a block of 128
/// threads, the K chunks of a and b copied ahead into shared tiles that
/// k.gemm multiplies (mma.sync).
Kernel gemm_kernel(const GemmCase &c, int64_t chunk) {
  dsl::KernelBuilder k("pipelined_mma", 128);
  auto a = k.tensor("a", c.dtype, 2, dsl::inner_contiguous(16));
  auto b = k.tensor("b", c.dtype, 2, dsl::inner_contiguous(16));
  auto out = k.tensor("out", DType::f32, 2);
  auto zero = k.index(0), row = k.block_id(0) * k.index(32);
  auto sa = k.alloc_shared(c.dtype, {32, chunk});
  auto sb = k.alloc_shared(c.dtype, {32, chunk});
  auto count = (k.dim(a, 1) + k.index(chunk - 1)) / k.index(chunk);
  auto acc = k.pipelined(count, c.stages, {k.full({32, 32}, 0, DType::f32)},
                         [&](dsl::Value step, std::vector<dsl::Value> carried) {
                           auto k0 = step * k.index(chunk);
                           k.copy(a, {row, k0}, sa);
                           k.copy(b, {zero, k0}, sb);
                           return std::vector{k.gemm(sa, sb, carried[0])};
                         });
  k.store(acc[0], out, {row, zero});
  return k.build();
}

void run_gemm(const GemmCase &c, int64_t rows) {
  const bool tf32 = c.dtype == DType::f32;
  const int64_t chunk = tf32 ? 32 : 64;
  const std::string name = "test_pipelined_mma_" +
                           std::string(name_of(c.dtype)) + "_" +
                           std::to_string(c.stages);
  const ops::LoadedKernel &kernel = ops::load_kernel(
      ops::make_key(name), [&] { return gemm_kernel(c, chunk); });
  std::vector<float> a = test_values(rows * c.k, !tf32, 11),
                     b = test_values(32 * c.k, !tf32, 12);
  std::vector<uint8_t> ra = encode(a, c.dtype), rb = encode(b, c.dtype);
  const int64_t out_rows = (rows + 31) / 32 * 32;
  std::vector<float> out(out_rows * 32);
  rt::DeviceBuffer da(ra.size()), db(rb.size()), dout(out.size() * 4);
  da.upload(ra.data(), ra.size());
  db.upload(rb.data(), rb.size());
  const int64_t a_shape[2] = {rows, c.k}, b_shape[2] = {32, c.k},
                out_shape[2] = {out_rows, 32};
  launch_rows(
      kernel, rows,
      [&](rt::ArgPack &args) {
        ops::push_tensor(
            args, rt::TensorView::contiguous(da.ptr(), c.dtype, a_shape));
        ops::push_tensor(
            args, rt::TensorView::contiguous(db.ptr(), c.dtype, b_shape));
        ops::push_tensor(args, rt::TensorView::contiguous(
                                   dout.ptr(), DType::f32, out_shape));
      },
      128, 32);
  dout.download(out.data(), out.size() * 4);
  size_t bad = 0;
  for (int64_t r = 0; r < out_rows; ++r)
    for (int64_t j = 0; j < 32; ++j) {
      // Rows past the tensor's end: sums of zeros.
      const Tf32Dot want =
          r < rows ? tf32_dot(&a[r * c.k], &b[j * c.k], c.k) : Tf32Dot{};
      const float got = out[r * 32 + j];
      if (!want.matches(got, tf32) && bad++ < 5)
        UNSCOPED_INFO(name << " K " << c.k << " row " << r << " col " << j
                           << ": " << got << ", want " << want.sum);
    }
  CHECK(bad == 0);
}

struct TransposedCase {
  DType a_dtype, b_dtype; // g and x
  int stages;
  int64_t k; // rows of g and x, in chunks of 64
};

/// out (32 x N) = g^T x summed over K, for g (K x 32) and x (K x N) whose
/// rows run along K (a weight gradient's operands): each block 64 columns
/// of x; K in chunks of 64 rows copied ahead as they are, multiplied with
/// transpose_a and transpose_b.
Kernel transposed_kernel(const TransposedCase &c) {
  dsl::KernelBuilder k("pipelined_mma_t", 128);
  auto g = k.tensor("g", c.a_dtype, 2, dsl::inner_contiguous(16));
  auto x = k.tensor("x", c.b_dtype, 2, dsl::inner_contiguous(16));
  auto out = k.tensor("out", DType::f32, 2);
  k.grid({k.blocks(x, 1, 64)});
  auto zero = k.index(0), n0 = k.block_id(0) * k.index(64);
  auto sg = k.alloc_shared(c.a_dtype, {64, 32});
  auto sx = k.alloc_shared(c.b_dtype, {64, 64});
  auto steps = (k.dim(x, 0) + k.index(63)) / k.index(64);
  auto acc = k.pipelined(
      steps, c.stages, {k.full({32, 64}, 0, DType::f32)},
      [&](dsl::Value step, std::vector<dsl::Value> carried) {
        k.copy(g, {step * k.index(64), zero}, sg);
        k.copy(x, {step * k.index(64), n0}, sx);
        return std::vector{
            k.gemm(sg, sx, carried[0],
                   dsl::GemmOptions{.transpose_a = true, .transpose_b = true})};
      });
  k.store(acc[0], out, {zero, n0});
  return k.build();
}

void run_transposed(const TransposedCase &c, int64_t n) {
  const std::string name =
      "test_pipelined_mma_t_" + std::string(name_of(c.a_dtype)) + "_" +
      std::string(name_of(c.b_dtype)) + "_" + std::to_string(c.stages);
  const ops::LoadedKernel &kernel = ops::load_kernel(
      ops::make_key(name), [&] { return transposed_kernel(c); });
  const bool tf32 = c.a_dtype == DType::f32 || c.b_dtype == DType::f32;
  std::vector<float> g = test_values(c.k * 32, !tf32, 21),
                     x = test_values(c.k * n, !tf32, 22);
  // A bf16 operand holds bf16 values (what the tensor core widens).
  for (auto [v, dtype] : {std::pair{&g, c.a_dtype}, {&x, c.b_dtype}})
    if (dtype == DType::bf16)
      for (float &e : *v)
        e = ref::bf16_to_f32(ref::f32_to_bf16(e));
  const std::vector<uint8_t> rg = encode(g, c.a_dtype),
                             rx = encode(x, c.b_dtype);
  const int64_t out_n = (n + 63) / 64 * 64;
  std::vector<float> out(32 * out_n, -7.0f);
  rt::DeviceBuffer dg(rg.size()), dx(rx.size()), dout(out.size() * 4);
  dg.upload(rg.data(), rg.size());
  dx.upload(rx.data(), rx.size());
  dout.upload(out.data(), out.size() * 4);
  const int64_t g_shape[2] = {c.k, 32}, x_shape[2] = {c.k, n},
                out_shape[2] = {32, out_n};
  ops::KernelArgs args;
  args.tensor("g", rt::TensorView::contiguous(dg.ptr(), c.a_dtype, g_shape));
  args.tensor("x", rt::TensorView::contiguous(dx.ptr(), c.b_dtype, x_shape));
  launch_into(kernel, args, name, dout, out, out_shape);
  size_t bad = 0;
  for (int64_t m = 0; m < 32; ++m)
    for (int64_t j = 0; j < out_n; ++j) {
      Tf32Dot want;
      for (int64_t kk = 0; j < n && kk < c.k; ++kk) {
        const double term = static_cast<double>(tf32 ? as_tf32(g[kk * 32 + m])
                                                     : g[kk * 32 + m]) *
                            (tf32 ? as_tf32(x[kk * n + j]) : x[kk * n + j]);
        want.sum += term;
        want.magnitude += std::fabs(term);
      }
      const float got = out[m * out_n + j];
      if (!want.matches(got, tf32) && bad++ < 5)
        UNSCOPED_INFO(name << " K " << c.k << " N " << n << " [" << m << ", "
                           << j << "]: " << got << ", want " << want.sum);
    }
  CHECK(bad == 0);
}

} // namespace

TEST_CASE("pipelined copies run ahead on cp.async", "[dsl][pipelined]") {
  // Rows promised 4-byte aligned (and one stage): each thread's cp.async
  // pieces. Whole tiles; rows and columns ending inside a tile; fewer
  // chunks than stages - 1 (the prologue's later groups are empty).
  for (int stages : {1, 2, 3, 4}) {
    const int align = stages == 1 ? 16 : 4;
    run_sum({DType::f32, stages, 64, 1024, 32, align});
    run_sum({DType::f32, stages, 70, 1000, 32, align});
    run_sum({DType::f32, stages, 33, 60, 32, align});
    run_sum({DType::bf16, stages, 70, 1000, 32, align});
  }
  // No steps at all: the sums are zeros.
  run_sum({DType::f32, 3, 40, 0, 32, 4});
}

TEST_CASE("pipelined copies run ahead on TMA", "[dsl][pipelined][tma]") {
  // Rows promised 16-byte aligned: a TMA copy a step, an mbarrier a stage;
  // the tensor map fills zeros past the rows' and columns' ends.
  for (int stages : {2, 3, 4}) {
    run_sum({DType::f32, stages, 64, 1024});
    run_sum({DType::f32, stages, 70, 1000});
    run_sum({DType::f32, stages, 33, 40});
    run_sum({DType::bf16, stages, 70, 1000});
    run_sum({DType::bf16, stages, 256, 4096});
  }
  run_sum({DType::f32, 3, 40, 0});
}

TEST_CASE("more than 48 KB of shared memory is taken dynamically",
          "[dsl][pipelined]") {
  // 4 stages of 64 x 64 f32 (64 KB) and of 192 x 64 (192 KB): the kernel
  // reports its bytes, the launch raises the function's limit to them;
  // with TMA the stages are realigned to 128 bytes.
  for (int align : {4, 16}) {
    run_sum({DType::f32, 4, 300, 1000, 64, align});
    run_sum({DType::f32, 4, 500, 700, 192, align});
  }
}

TEST_CASE("pipelined mma.sync gemm on 128 threads", "[dsl][pipelined][mma]") {
  for (int stages : {1, 2, 3}) {
    run_gemm({DType::bf16, stages, 512}, 96);
    run_gemm({DType::bf16, stages, 456}, 70); // K ends inside a chunk
    run_gemm({DType::f32, stages, 512}, 96);
    run_gemm({DType::f32, stages, 300}, 70);
  }
}

TEST_CASE("a pipelined gemm of transposed operands (mma.sync)",
          "[dsl][pipelined][mma]") {
  // g^T x as a weight gradient's: f32 g with bf16 x (tf32), and bf16 both
  // (m16n8k16); K a multiple of the chunk and not (zeros past the end);
  // N ending inside a block's columns (rows of a multiple of 16 bytes, as
  // the kernel declares them).
  for (int stages : {1, 2, 3}) {
    run_transposed({DType::f32, DType::bf16, stages, 512}, 128);
    run_transposed({DType::f32, DType::bf16, stages, 200}, 104);
    run_transposed({DType::bf16, DType::bf16, stages, 512}, 192);
    run_transposed({DType::f32, DType::f32, stages, 136}, 64);
  }
}
