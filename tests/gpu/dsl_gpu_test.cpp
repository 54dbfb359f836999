// dsl_gpu_test.cpp - DSL constructs that no proving kernel uses yet, run on
// the GPU against plain C++: serial loops carrying fragments (a blocked one
// and a reduction result), unrolled loops, if_else on a run-time scalar;
// log, log1p and softplus against double precision; casts from fp8.
#include "common/abi.h"
#include "common/convert.h"
#include "common/jit.h"

#include "tilejit/compiler/dsl.h"
#include "tilejit/runtime/buffer.h"
#include "tilejit/runtime/launch.h"
#include "tilejit/runtime/stream.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

using namespace tilejit;

namespace {

constexpr int kRows = 16, kCols = 64; // a block's tile

/// rows x kCols floats drawn uniformly from [lo, hi) with Catch's seed.
std::vector<float> uniform_rows(int64_t rows, float lo, float hi) {
  std::mt19937_64 gen(Catch::rngSeed());
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> x(rows * kCols);
  for (float &v : x)
    v = dist(gen);
  return x;
}

/// Launches `kernel` on a grid of one block per `block_rows` rows,
/// `threads` a block, with the arguments `push` packs, and waits for it.
template <class Fn>
void launch_rows(const ops::LoadedKernel &kernel, int64_t rows, Fn &&push,
                 unsigned threads = 256, int64_t block_rows = kRows) {
  rt::ArgPack args;
  push(args);
  rt::LaunchConfig config;
  config.grid = {static_cast<uint32_t>((rows + block_rows - 1) / block_rows), 1,
                 1};
  config.block = {threads, 1, 1};
  rt::launch(kernel.function, config, args.data());
  rt::synchronize(nullptr);
}

/// out = x^n + 3x + (n > 2 ? -1 : 1) + 2^n * max(row of x)
///       + max(0, max over i < n of (max(row of x) + i)), n at run time.
/// The last term is carried from a splat: its layout comes from the body.
Kernel control_flow_kernel() {
  dsl::KernelBuilder k("control_flow", 256);
  auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
  auto out = k.tensor("out", DType::f32, 2, dsl::inner_contiguous(16));
  auto n = k.scalar("n", DType::i64);
  auto row = k.block_id(0) * k.index(kRows);
  auto t = k.load(x, {row, k.index(0)}, {kRows, kCols});
  auto one = k.full({kRows, kCols}, 1.0, DType::f32);
  auto rowmax = k.reduce_max(t, 1);
  // x^n and 2^n * rowmax, one multiply a step.
  auto powers = k.serial(
      k.index(0), n, {one, rowmax, k.full({kRows, 1}, 0.0, DType::f32)},
      [&](dsl::Value i, std::vector<dsl::Value> c) {
        auto shifted = k.reduce_max(t, 1) + k.cast(i, DType::f32);
        return std::vector<dsl::Value>{
            c[0] * t, c[1] * k.full({kRows, 1}, 2.0, DType::f32),
            k.max(c[2], shifted)};
      });
  // + 0x + 1x + 2x, unrolled: i is a constant index.
  auto sum =
      k.unroll(0, 3, {powers[0]}, [&](dsl::Value i, std::vector<dsl::Value> c) {
        auto fi = k.cast(i, DType::f32);
        return std::vector<dsl::Value>{c[0] + t * fi};
      });
  auto branch = k.if_else(
      k.gt(n, k.constant(2, DType::i64)), {sum[0]},
      [&](dsl::Value, std::vector<dsl::Value> c) {
        return std::vector<dsl::Value>{c[0] -
                                       k.full({kRows, kCols}, 1.0, DType::f32)};
      },
      [&](dsl::Value, std::vector<dsl::Value> c) {
        return std::vector<dsl::Value>{c[0] +
                                       k.full({kRows, kCols}, 1.0, DType::f32)};
      });
  auto result = branch[0] + k.broadcast(powers[1], {kRows, kCols}) +
                k.broadcast(powers[2], {kRows, kCols});
  k.store(result, out, {row, k.index(0)});
  return k.build();
}

std::vector<float> reference(const std::vector<float> &x, int64_t rows,
                             int64_t n) {
  std::vector<float> out(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    float m = -INFINITY;
    for (int c = 0; c < kCols; ++c)
      m = std::max(m, x[r * kCols + c]);
    float scaled = m, best = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
      scaled *= 2.0f;
      best = std::max(best, m + static_cast<float>(i));
    }
    for (int c = 0; c < kCols; ++c) {
      float v = x[r * kCols + c], p = 1.0f;
      for (int64_t i = 0; i < n; ++i)
        p *= v;
      p = p + 3.0f * v;
      p += n > 2 ? -1.0f : 1.0f;
      out[r * kCols + c] = p + scaled + best;
    }
  }
  return out;
}

} // namespace

TEST_CASE("serial, unroll and if_else run on the GPU as written",
          "[dsl][control_flow]") {
  const ops::LoadedKernel &kernel =
      ops::load_kernel(ops::make_key("test_control_flow"), control_flow_kernel);
  const int64_t rows = 40 * kRows + 5; // a tail block
  std::vector<float> x = uniform_rows(rows, -1.5f, 1.5f);
  rt::DeviceBuffer dx(x.size() * 4), dout(x.size() * 4);
  dx.upload(x.data(), x.size() * 4);

  for (int64_t n : {0, 1, 2, 3, 7}) {
    CAPTURE(n);
    dout.fill_zero();
    const int64_t shape[2] = {rows, kCols};
    launch_rows(kernel, rows, [&](rt::ArgPack &args) {
      ops::push_tensor(args,
                       rt::TensorView::contiguous(dx.ptr(), DType::f32, shape));
      ops::push_tensor(
          args, rt::TensorView::contiguous(dout.ptr(), DType::f32, shape));
      args.push(n);
    });
    std::vector<float> got(x.size());
    dout.download(got.data(), got.size() * 4);
    std::vector<float> want = reference(x, rows, n);
    size_t bad = 0;
    for (size_t i = 0; i < got.size(); ++i)
      // The GPU may contract t * i + c into one FMA.
      bad += !(std::abs(got[i] - want[i]) <= 1e-5f * (1 + std::abs(want[i])));
    CHECK(bad == 0);
  }
}

namespace {

/// log, log1p and softplus of x into three outputs.
Kernel math_kernel() {
  dsl::KernelBuilder k("math_log", 256);
  auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
  auto o1 = k.tensor("log", DType::f32, 2, dsl::inner_contiguous(16));
  auto o2 = k.tensor("log1p", DType::f32, 2, dsl::inner_contiguous(16));
  auto o3 = k.tensor("softplus", DType::f32, 2, dsl::inner_contiguous(16));
  auto row = k.block_id(0) * k.index(kRows);
  auto t = k.load(x, {row, k.index(0)}, {kRows, kCols});
  k.store(k.log(t), o1, {row, k.index(0)});
  k.store(k.log1p(t), o2, {row, k.index(0)});
  k.store(k.softplus(t), o3, {row, k.index(0)});
  return k.build();
}

/// Every fp8 code of `dtype` decoded to f32 (and back to the code through
/// an i32 bit cast of the f32, to check casts from fp8 to integers too).
Kernel fp8_decode_kernel(DType dtype) {
  dsl::KernelBuilder k("fp8_decode", 256);
  auto codes = k.tensor("codes", dtype, 2, dsl::inner_contiguous(16));
  auto out = k.tensor("out", DType::f32, 2, dsl::inner_contiguous(16));
  auto t = k.load(codes, {k.index(0), k.index(0)}, {1, 256});
  k.store(k.cast(t, DType::f32), out, {k.index(0), k.index(0)});
  return k.build();
}

/// Distance in units in the last place of the f32 nearest to `want`.
double ulps(float got, double want) {
  if (std::isnan(want))
    return std::isnan(got) ? 0 : INFINITY;
  if (std::isinf(want))
    return got == static_cast<float>(want) ? 0 : INFINITY;
  float w = static_cast<float>(want);
  double spacing = std::nextafter(std::abs(w), INFINITY) - std::abs(w);
  return std::abs(static_cast<double>(got) - want) / spacing;
}

} // namespace

TEST_CASE("log and log1p are within 2 ulp, softplus follows its definition",
          "[dsl][math]") {
  const ops::LoadedKernel &kernel =
      ops::load_kernel(ops::make_key("test_math_log"), math_kernel);
  std::mt19937_64 gen(Catch::rngSeed());
  const int64_t rows = 64 * kRows;
  std::vector<float> x(rows * kCols);
  // Wide magnitudes (subnormals to near overflow), both signs, around 0 and
  // -1, and the edge values.
  std::uniform_real_distribution<double> expo(-149, 128), unit(-1, 1);
  for (size_t i = 0; i < x.size(); ++i) {
    switch (i % 4) {
    case 0:
      x[i] = static_cast<float>(std::exp2(expo(gen)));
      break;
    case 1:
      x[i] = static_cast<float>(unit(gen));
      break;
    case 2:
      x[i] = static_cast<float>(unit(gen) * 40);
      break;
    default:
      x[i] = -static_cast<float>(std::exp2(expo(gen) / 8));
      break;
    }
  }
  const float edges[] = {0.0f,      -0.0f, 1.0f,   -1.0f,   INFINITY,
                         -INFINITY, NAN,   1e-45f, 3.4e38f, -0.5f,
                         20.0f,     20.5f, -20.0f};
  std::copy(std::begin(edges), std::end(edges), x.begin());

  const size_t bytes = x.size() * 4;
  rt::DeviceBuffer dx(bytes), d1(bytes), d2(bytes), d3(bytes);
  dx.upload(x.data(), bytes);
  const int64_t shape[2] = {rows, kCols};
  launch_rows(kernel, rows, [&](rt::ArgPack &args) {
    for (const rt::DeviceBuffer *b : {&dx, &d1, &d2, &d3})
      ops::push_tensor(args,
                       rt::TensorView::contiguous(b->ptr(), DType::f32, shape));
  });
  std::vector<float> g1(x.size()), g2(x.size()), g3(x.size());
  d1.download(g1.data(), bytes);
  d2.download(g2.data(), bytes);
  d3.download(g3.data(), bytes);

  double worst_log = 0, worst_log1p = 0;
  size_t bad_softplus = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    double v = x[i];
    worst_log = std::max(worst_log, ulps(g1[i], std::log(v)));
    worst_log1p = std::max(worst_log1p, ulps(g2[i], std::log1p(v)));
    // softplus from the GPU's own exp and log1p: within 2 ulp of the
    // double-precision value where it is not x itself.
    double sp = x[i] > 20 ? v : std::log1p(std::exp(v));
    bad_softplus += !(x[i] > 20 ? g3[i] == x[i] : ulps(g3[i], sp) <= 3);
  }
  INFO("worst log error " << worst_log << " ulp, log1p " << worst_log1p
                          << " ulp");
  CHECK(worst_log <= 2);
  CHECK(worst_log1p <= 2);
  CHECK(bad_softplus == 0);
}

TEST_CASE("casts from fp8 decode every code exactly", "[dsl][cast]") {
  for (DType dtype : {DType::e4m3, DType::e5m2}) {
    CAPTURE(name_of(dtype));
    const ops::LoadedKernel &kernel = ops::load_kernel(
        ops::make_key("test_fp8_decode_" + std::string(name_of(dtype))),
        [&] { return fp8_decode_kernel(dtype); });
    std::vector<uint8_t> codes(256);
    std::iota(codes.begin(), codes.end(), 0);
    rt::DeviceBuffer dc(256), dout(256 * 4);
    dc.upload(codes.data(), 256);
    const int64_t shape[2] = {1, 256};
    launch_rows(kernel, 1, [&](rt::ArgPack &args) {
      ops::push_tensor(args,
                       rt::TensorView::contiguous(dc.ptr(), dtype, shape));
      ops::push_tensor(
          args, rt::TensorView::contiguous(dout.ptr(), DType::f32, shape));
    });
    std::vector<float> got(256);
    dout.download(got.data(), 256 * 4);
    size_t bad = 0;
    for (int c = 0; c < 256; ++c) {
      float want = dtype == DType::e4m3
                       ? ref::e4m3_to_f32(static_cast<uint8_t>(c))
                       : ref::e5m2_to_f32(static_cast<uint8_t>(c));
      bad += !(std::isnan(want) ? std::isnan(got[c])
                                : std::memcmp(&want, &got[c], 4) == 0);
    }
    CHECK(bad == 0);
  }
}

namespace {

/// Each block adds the row sums of its 16 x 64 tile of x into sums[row] and
/// takes the maximum of its tile's values (as i32 codes and as u32) into
/// imax[row, c] and umax[row, c]; blocks along y share rows.
Kernel atomics_kernel() {
  dsl::KernelBuilder k("atomics", 256);
  auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
  auto sums = k.tensor("sums", DType::f32, 2);
  auto imax = k.tensor("imax", DType::i32, 2);
  auto umax = k.tensor("umax", DType::u32, 2);
  auto fmax = k.tensor("fmax", DType::f32, 2);
  auto row = k.block_id(0) * k.index(kRows);
  auto col = k.block_id(1) * k.index(kCols);
  auto t = k.load(x, {row, col}, {kRows, kCols});
  k.atomic_add(k.reduce_sum(t, 1), sums, {row, k.index(0)});
  auto codes = k.cast(t * k.constant(1000, DType::f32), DType::i32);
  k.atomic_max(codes, imax, {row, k.index(0)});
  k.atomic_max(k.bitcast(codes, DType::u32), umax, {row, k.index(0)});
  k.atomic_max(t, fmax, {row, k.index(0)});
  return k.build();
}

} // namespace

TEST_CASE("atomic_add and atomic_max combine every block's values",
          "[dsl][atomic]") {
  const ops::LoadedKernel &kernel =
      ops::load_kernel(ops::make_key("test_atomics"), atomics_kernel);
  const int64_t rows = 8 * kRows + 3, blocks_y = 5, cols = blocks_y * kCols;
  std::mt19937_64 gen(Catch::rngSeed());
  // Multiples of 1/8: every sum is exact, whatever the order of the adds.
  std::uniform_int_distribution<int> dist(-800, 800);
  std::vector<float> x(rows * cols);
  for (float &v : x)
    v = dist(gen) / 8.0f;
  rt::DeviceBuffer dx(x.size() * 4), ds(rows * 4), di(rows * kCols * 4),
      du(rows * kCols * 4), df(rows * kCols * 4);
  dx.upload(x.data(), x.size() * 4);
  ds.fill_zero();
  std::vector<int32_t> lowest(rows * kCols, INT32_MIN);
  std::vector<float> neg_inf(rows * kCols, -INFINITY);
  di.upload(lowest.data(), lowest.size() * 4);
  du.fill_zero();
  df.upload(neg_inf.data(), neg_inf.size() * 4);

  rt::ArgPack args;
  const int64_t xs[2] = {rows, cols}, ss[2] = {rows, 1}, ms[2] = {rows, kCols};
  ops::push_tensor(args, rt::TensorView::contiguous(dx.ptr(), DType::f32, xs));
  ops::push_tensor(args, rt::TensorView::contiguous(ds.ptr(), DType::f32, ss));
  ops::push_tensor(args, rt::TensorView::contiguous(di.ptr(), DType::i32, ms));
  ops::push_tensor(args, rt::TensorView::contiguous(du.ptr(), DType::u32, ms));
  ops::push_tensor(args, rt::TensorView::contiguous(df.ptr(), DType::f32, ms));
  rt::LaunchConfig config;
  config.grid = {static_cast<uint32_t>((rows + kRows - 1) / kRows),
                 static_cast<uint32_t>(blocks_y), 1};
  config.block = {256, 1, 1};
  rt::launch(kernel.function, config, args.data());
  rt::synchronize(nullptr);

  std::vector<float> sums(rows), fmax(rows * kCols);
  std::vector<int32_t> imax(rows * kCols);
  std::vector<uint32_t> umax(rows * kCols);
  ds.download(sums.data(), rows * 4);
  di.download(imax.data(), imax.size() * 4);
  du.download(umax.data(), umax.size() * 4);
  df.download(fmax.data(), fmax.size() * 4);
  size_t bad = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t c = 0; c < cols; ++c)
      sum += x[r * cols + c];
    bad += sums[r] != static_cast<float>(sum);
    for (int c = 0; c < kCols; ++c) {
      int32_t im = INT32_MIN;
      uint32_t um = 0;
      float fm = -INFINITY;
      for (int64_t b = 0; b < blocks_y; ++b) {
        float v = x[r * cols + b * kCols + c];
        int32_t code = static_cast<int32_t>(v * 1000.0f);
        im = std::max(im, code);
        um = std::max(um, static_cast<uint32_t>(code));
        fm = std::max(fm, v);
      }
      bad += imax[r * kCols + c] != im;
      bad += umax[r * kCols + c] != um;
      bad += fmax[r * kCols + c] != fm;
    }
  }
  CHECK(bad == 0);
}

namespace {

/// Through a shared tile: each block stores its 16 x 64 tile, and after a
/// barrier reads it back as two 16 x 32 halves in swapped order, so every
/// thread reads values other threads wrote: out[:, 0:32] = x[:, 32:64],
/// out[:, 32:64] = x[:, 0:32] * 2.
Kernel shared_swap_kernel() {
  dsl::KernelBuilder k("shared_swap", 256);
  auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
  auto out = k.tensor("out", DType::f32, 2, dsl::inner_contiguous(16));
  auto row = k.block_id(0) * k.index(kRows);
  auto s = k.alloc_shared(DType::f32, {kRows, kCols});
  k.store(k.load(x, {row, k.index(0)}, {kRows, kCols}), s,
          {k.index(0), k.index(0)});
  k.barrier();
  auto right = k.load(s, {k.index(0), k.index(kCols / 2)}, {kRows, kCols / 2});
  auto left = k.load(s, {k.index(0), k.index(0)}, {kRows, kCols / 2});
  k.store(right, out, {row, k.index(0)});
  k.store(left * k.constant(2, DType::f32), out, {row, k.index(kCols / 2)});
  return k.build();
}

} // namespace

TEST_CASE("fragments go through a shared tile around a barrier",
          "[dsl][shared]") {
  const ops::LoadedKernel &kernel =
      ops::load_kernel(ops::make_key("test_shared_swap"), shared_swap_kernel);
  const int64_t rows = 20 * kRows + 7; // a tail block
  std::vector<float> x = uniform_rows(rows, -100, 100);
  rt::DeviceBuffer dx(x.size() * 4), dout(x.size() * 4);
  dx.upload(x.data(), x.size() * 4);
  dout.fill_zero();
  const int64_t shape[2] = {rows, kCols};
  launch_rows(kernel, rows, [&](rt::ArgPack &args) {
    ops::push_tensor(args,
                     rt::TensorView::contiguous(dx.ptr(), DType::f32, shape));
    ops::push_tensor(args,
                     rt::TensorView::contiguous(dout.ptr(), DType::f32, shape));
  });
  std::vector<float> got(x.size());
  dout.download(got.data(), got.size() * 4);
  size_t bad = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int c = 0; c < kCols / 2; ++c) {
      bad += got[r * kCols + c] != x[r * kCols + kCols / 2 + c];
      bad += got[r * kCols + kCols / 2 + c] != x[r * kCols + c] * 2;
    }
  CHECK(bad == 0);
}

namespace {

/// x (rows, 64) f32 -> e2m1 codes packed two a byte, out (rows, 32) u8.
Kernel e2m1_kernel() {
  dsl::KernelBuilder k("e2m1", 256);
  auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
  auto out = k.tensor("out", DType::u8, 2);
  auto row = k.block_id(0) * k.index(kRows);
  auto t = k.load(x, {row, k.index(0)}, {kRows, kCols});
  k.store(k.pack_nibbles(k.to_e2m1(t)), out, {row, k.index(0)});
  return k.build();
}

} // namespace

TEST_CASE("to_e2m1 and pack_nibbles match the reference on every rounding "
          "boundary",
          "[dsl][cast]") {
  const ops::LoadedKernel &kernel = ops::load_kernel(
      ops::make_key("test_e2m1"), [] { return e2m1_kernel(); });
  // Every midpoint and representable value, a float either side, of both
  // signs; zeros, infinities, NaNs, subnormals, huge values; then random
  // values over [-8, 8). 37 rows: the last block has a tail.
  std::vector<float> special;
  for (float v :
       {0.0f, 0.25f, 0.5f, 0.75f, 1.0f, 1.25f, 1.5f,   1.75f, 2.0f,     2.5f,
        3.0f, 3.5f,  4.0f, 5.0f,  6.0f, 7.0f,  1e-40f, 1e30f, INFINITY, NAN})
    for (float s : {v, -v})
      for (float w :
           {s, std::nextafter(s, -INFINITY), std::nextafter(s, INFINITY)})
        special.push_back(w);
  const int64_t rows = 37;
  std::vector<float> x = uniform_rows(rows, -8.0f, 8.0f);
  std::copy(special.begin(), special.end(), x.begin());
  rt::DeviceBuffer dx(x.size() * 4), dout(rows * kCols / 2);
  dx.upload(x.data(), x.size() * 4);
  const int64_t xs[2] = {rows, kCols}, os[2] = {rows, kCols / 2};
  launch_rows(kernel, rows, [&](rt::ArgPack &args) {
    ops::push_tensor(args,
                     rt::TensorView::contiguous(dx.ptr(), DType::f32, xs));
    ops::push_tensor(args,
                     rt::TensorView::contiguous(dout.ptr(), DType::u8, os));
  });
  std::vector<uint8_t> got(rows * kCols / 2);
  dout.download(got.data(), got.size());
  size_t bad = 0;
  for (size_t j = 0; j < got.size(); ++j) {
    uint8_t want = ref::pack_e2m1x2(ref::f32_to_e2m1(x[2 * j]),
                                    ref::f32_to_e2m1(x[2 * j + 1]));
    if (got[j] != want && bad++ < 5)
      UNSCOPED_INFO("pair " << j << " (" << x[2 * j] << ", " << x[2 * j + 1]
                            << "): got " << int(got[j]) << ", want "
                            << int(want));
  }
  CHECK(bad == 0);
}

namespace {

/// in (rows, 32) u8 bytes of packed e2m1 codes -> their f32 values, out
/// (rows, 64), and the codes re-encoded and re-packed, again (rows, 32).
Kernel e2m1_decode_kernel() {
  dsl::KernelBuilder k("e2m1_decode", 256);
  auto in = k.tensor("in", DType::u8, 2, dsl::inner_contiguous(16));
  auto out = k.tensor("out", DType::f32, 2, dsl::inner_contiguous(16));
  auto again = k.tensor("again", DType::u8, 2, dsl::inner_contiguous(16));
  auto row = k.block_id(0) * k.index(kRows);
  auto bytes = k.load(in, {row, k.index(0)}, {kRows, kCols / 2});
  auto values = k.from_e2m1(k.unpack_nibbles(bytes));
  k.store(values, out, {row, k.index(0)});
  k.store(k.pack_nibbles(k.to_e2m1(values)), again, {row, k.index(0)});
  return k.build();
}

} // namespace

TEST_CASE("unpack_nibbles and from_e2m1 decode every byte as the reference "
          "does",
          "[dsl][cast]") {
  const ops::LoadedKernel &kernel = ops::load_kernel(
      ops::make_key("test_e2m1_decode"), [] { return e2m1_decode_kernel(); });
  // Every byte value, then random bytes; 21 rows: the last block has a tail.
  const int64_t rows = 21, bytes = rows * kCols / 2;
  std::vector<uint8_t> in(bytes);
  std::mt19937_64 gen(Catch::rngSeed());
  for (int64_t i = 0; i < bytes; ++i)
    in[i] = static_cast<uint8_t>(i < 256 ? i : gen() & 0xFF);
  rt::DeviceBuffer din(bytes), dout(bytes * 2 * 4), dagain(bytes);
  din.upload(in.data(), bytes);
  const int64_t bs[2] = {rows, kCols / 2}, vs[2] = {rows, kCols};
  launch_rows(kernel, rows, [&](rt::ArgPack &args) {
    ops::push_tensor(args,
                     rt::TensorView::contiguous(din.ptr(), DType::u8, bs));
    ops::push_tensor(args,
                     rt::TensorView::contiguous(dout.ptr(), DType::f32, vs));
    ops::push_tensor(args,
                     rt::TensorView::contiguous(dagain.ptr(), DType::u8, bs));
  });
  std::vector<float> got(bytes * 2);
  std::vector<uint8_t> again(bytes);
  dout.download(got.data(), got.size() * 4);
  dagain.download(again.data(), bytes);
  size_t bad = 0;
  for (int64_t j = 0; j < bytes; ++j) {
    float want[2] = {ref::e2m1_to_f32(in[j] & 0xF),
                     ref::e2m1_to_f32(in[j] >> 4)};
    for (int h = 0; h < 2; ++h)
      if (std::memcmp(&got[2 * j + h], &want[h], 4) != 0 && bad++ < 5)
        UNSCOPED_INFO("byte " << j << " = " << int(in[j]) << ", nibble " << h
                              << ": got " << got[2 * j + h] << ", want "
                              << want[h]);
    if (again[j] != in[j] && bad++ < 5)
      UNSCOPED_INFO("byte " << j << " = " << int(in[j]) << " re-encoded as "
                            << int(again[j]));
  }
  CHECK(bad == 0);
}

namespace {

/// x (rows, 64) f32 -> E5M6 codes, packed 8 into 3 words, out (rows, 24)
/// u32, the codes decoded again, back (rows, 64) f32, and the words
/// unpacked again, codes (rows, 64) u32. 128 threads: a
/// fragment holds a multiple of the thread count, and a block's words are
/// 16 x 24 = 3 x 128.
Kernel e5m6_kernel() {
  dsl::KernelBuilder k("e5m6", 128);
  auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
  auto out = k.tensor("out", DType::u32, 2);
  auto back = k.tensor("back", DType::f32, 2, dsl::inner_contiguous(16));
  auto unpacked = k.tensor("unpacked", DType::u32, 2);
  auto row = k.block_id(0) * k.index(kRows);
  auto codes = k.to_e5m6(k.load(x, {row, k.index(0)}, {kRows, kCols}));
  auto words = k.pack_e5m6(codes);
  k.store(words, out, {row, k.index(0)});
  k.store(k.from_e5m6(codes), back, {row, k.index(0)});
  k.store(k.unpack_e5m6(words), unpacked, {row, k.index(0)});
  return k.build();
}

} // namespace

TEST_CASE("to_e5m6, pack_e5m6, unpack_e5m6 and from_e5m6 match the "
          "reference bit for bit",
          "[dsl][cast]") {
  const ops::LoadedKernel &kernel = ops::load_kernel(
      ops::make_key("test_e5m6"), [] { return e5m6_kernel(); });
  // The spec's special values (2^-20, 2^-14 x 63/64, 2^-14, 65024), the
  // edges of fp16's range, rounding ties of the 17 low bits, zeros,
  // infinities and NaNs, each of both signs with its neighbours; then random
  // bit patterns (every exponent, NaNs and subnormals too). 45 rows: the last
  // block has a tail.
  std::vector<uint32_t> special_bits;
  for (float v :
       {0.0f, 0x1p-20f, 0x1p-14f * 63 / 64, 0x1p-14f, 65024.0f, 65504.0f,
        65536.0f, 0x1p-24f, 0x1p-25f, 1e-40f, 1.0f, 3.0f, 1e30f, INFINITY, NAN})
    for (float s : {v, -v})
      for (float w :
           {s, std::nextafter(s, -INFINITY), std::nextafter(s, INFINITY)}) {
        uint32_t b;
        std::memcpy(&b, &w, 4);
        special_bits.push_back(b);
      }
  for (uint32_t tie : {0x3F810000u, 0x3F830000u, 0x3F80FFFFu, 0x3F830001u,
                       0x38810000u, 0x33810000u})
    special_bits.push_back(tie);
  const int64_t rows = 45, n = rows * kCols;
  std::vector<uint32_t> bits(n);
  std::mt19937_64 gen(Catch::rngSeed());
  for (int64_t i = 0; i < n; ++i)
    bits[i] = i < static_cast<int64_t>(special_bits.size())
                  ? special_bits[i]
                  : static_cast<uint32_t>(gen());
  std::vector<float> x(n);
  std::memcpy(x.data(), bits.data(), n * 4);
  rt::DeviceBuffer dx(n * 4), dout(rows * 24 * 4), dback(n * 4),
      dunpacked(n * 4);
  dx.upload(x.data(), n * 4);
  const int64_t xs[2] = {rows, kCols}, os[2] = {rows, 24};
  launch_rows(
      kernel, rows,
      [&](rt::ArgPack &args) {
        ops::push_tensor(args,
                         rt::TensorView::contiguous(dx.ptr(), DType::f32, xs));
        ops::push_tensor(
            args, rt::TensorView::contiguous(dout.ptr(), DType::u32, os));
        ops::push_tensor(
            args, rt::TensorView::contiguous(dback.ptr(), DType::f32, xs));
        ops::push_tensor(
            args, rt::TensorView::contiguous(dunpacked.ptr(), DType::u32, xs));
      },
      /*threads=*/128);
  std::vector<uint32_t> words(rows * 24), unpacked(n);
  std::vector<float> back(n);
  dout.download(words.data(), words.size() * 4);
  dback.download(back.data(), n * 4);
  dunpacked.download(unpacked.data(), n * 4);
  size_t bad = 0;
  for (int64_t g = 0; g < n / 8; ++g) {
    uint16_t codes[8];
    for (int i = 0; i < 8; ++i) {
      codes[i] = ref::f32_to_e5m6(x[8 * g + i]);
      float want = ref::e5m6_to_f32(codes[i]), got = back[8 * g + i];
      bool same =
          std::isnan(want) ? std::isnan(got) : std::memcmp(&want, &got, 4) == 0;
      if (!same && bad++ < 5)
        UNSCOPED_INFO("element " << 8 * g + i << " (bits " << std::hex
                                 << bits[8 * g + i] << "): decoded " << got
                                 << ", want " << want << std::dec);
      if (unpacked[8 * g + i] != codes[i] && bad++ < 5)
        UNSCOPED_INFO("element " << 8 * g + i << ": unpacked code " << std::hex
                                 << unpacked[8 * g + i] << ", want " << codes[i]
                                 << std::dec);
    }
    uint32_t want[3];
    ref::pack_e5m6(codes, want);
    for (int w = 0; w < 3; ++w)
      if (words[3 * g + w] != want[w] && bad++ < 5)
        UNSCOPED_INFO("group " << g << " word " << w << ": got " << std::hex
                               << words[3 * g + w] << ", want " << want[w]
                               << std::dec);
  }
  CHECK(bad == 0);
}

namespace {

constexpr int kShuffleCols = 512; // (16, 512) i32 = (16, 128, 4) over 128

/// x (rows, 512) i32, seen as (16, 128, 4) a block of 128 threads (dim 1 the
/// thread): partner = x with lanes 5 apart swapped, sum = the sum over the
/// 32 lanes of each warp by a butterfly of five xor shuffles, lane7 = lane
/// 7's elements in every lane of its warp, lane5of16 = the same from lane 5
/// of each group of 16 (a (128, 16, 4) view).
Kernel shuffle_kernel() {
  dsl::KernelBuilder k("shuffle", 128);
  auto x = k.tensor("x", DType::i32, 2, dsl::inner_contiguous(16));
  auto partner = k.tensor("partner", DType::i32, 2, dsl::inner_contiguous(16));
  auto sum = k.tensor("sum", DType::i32, 2, dsl::inner_contiguous(16));
  auto lane7 = k.tensor("lane7", DType::i32, 2, dsl::inner_contiguous(16));
  auto lane5of16 =
      k.tensor("lane5of16", DType::i32, 2, dsl::inner_contiguous(16));
  auto row = k.block_id(0) * k.index(kRows);
  auto t = k.reshape(k.load(x, {row, k.index(0)}, {kRows, kShuffleCols}),
                     {kRows * kShuffleCols / 512, 128, 4});
  auto back = [&](dsl::Value v) { return k.reshape(v, {kRows, kShuffleCols}); };
  k.store(back(k.shuffle_xor(t, 1, 5)), partner, {row, k.index(0)});
  auto s = t;
  for (int mask = 1; mask < 32; mask *= 2)
    s = s + k.shuffle_xor(s, 1, mask);
  k.store(back(s), sum, {row, k.index(0)});
  k.store(back(k.shuffle_idx(t, 1, 7)), lane7, {row, k.index(0)});
  auto groups = k.reshape(t, {kRows * kShuffleCols / 64, 16, 4});
  k.store(back(k.shuffle_idx(groups, 1, 5)), lane5of16, {row, k.index(0)});
  return k.build();
}

} // namespace

TEST_CASE("shuffle_xor and shuffle_idx exchange and broadcast lanes",
          "[dsl][shuffle]") {
  const ops::LoadedKernel &kernel = ops::load_kernel(
      ops::make_key("test_shuffle"), [] { return shuffle_kernel(); });
  const int64_t rows = 37, n = rows * kShuffleCols; // a tail block
  std::vector<int32_t> x(n);
  std::mt19937_64 gen(Catch::rngSeed());
  for (int32_t &v : x)
    v = static_cast<int32_t>(gen() % 2001) - 1000;
  rt::DeviceBuffer dx(n * 4), dp(n * 4), ds(n * 4), d7(n * 4), d5(n * 4);
  dx.upload(x.data(), n * 4);
  const int64_t shape[2] = {rows, kShuffleCols};
  launch_rows(
      kernel, rows,
      [&](rt::ArgPack &args) {
        for (const rt::DeviceBuffer *b : {&dx, &dp, &ds, &d7, &d5})
          ops::push_tensor(
              args, rt::TensorView::contiguous(b->ptr(), DType::i32, shape));
      },
      /*threads=*/128);
  std::vector<int32_t> partner(n), sum(n), lane7(n), lane5(n);
  dp.download(partner.data(), n * 4);
  ds.download(sum.data(), n * 4);
  d7.download(lane7.data(), n * 4);
  d5.download(lane5.data(), n * 4);
  // In a row of 512, column c is element c % 4 of thread (c / 4) % 128's
  // vector: the lane bits of c are bits 2..6.
  size_t bad = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < kShuffleCols; ++c) {
      const int32_t *row_x = &x[r * kShuffleCols];
      int32_t want_partner = row_x[c ^ (5 << 2)], want_sum = 0;
      for (int64_t lane = 0; lane < 32; ++lane)
        want_sum += row_x[(c & ~(int64_t{31} << 2)) | (lane << 2)];
      int64_t i = r * kShuffleCols + c;
      int32_t want7 = row_x[(c & ~(int64_t{31} << 2)) | (7 << 2)];
      int32_t want5 = row_x[(c & ~(int64_t{15} << 2)) | (5 << 2)];
      if ((lane7[i] != want7 || lane5[i] != want5) && bad++ < 5)
        UNSCOPED_INFO("row " << r << " col " << c << ": lane 7 " << lane7[i]
                             << " (want " << want7 << "), lane 5 of 16 "
                             << lane5[i] << " (want " << want5 << ")");
      if ((partner[i] != want_partner || sum[i] != want_sum) && bad++ < 5)
        UNSCOPED_INFO("row " << r << " col " << c << ": partner " << partner[i]
                             << " (want " << want_partner << "), sum " << sum[i]
                             << " (want " << want_sum << ")");
    }
  CHECK(bad == 0);
}

namespace {

/// x (rows, 512) f32 over 128 threads as (16, 128, 4): the max of each
/// thread's vector, then over the threads (a chained reduction whose second
/// step leaves the vector lanes' copies out); out = the row max, centred =
/// x - that max (the result broadcast back to every slot).
Kernel chained_max_kernel() {
  dsl::KernelBuilder k("chained_max", 128);
  auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
  auto out = k.tensor("out", DType::f32, 2);
  auto centred = k.tensor("centred", DType::f32, 2, dsl::inner_contiguous(16));
  auto row = k.block_id(0) * k.index(kRows);
  auto t = k.reshape(k.load(x, {row, k.index(0)}, {kRows, kShuffleCols}),
                     {kRows, 128, 4});
  auto m = k.reduce_max(k.reduce_max(t, 2), 1); // (16, 1, 1)
  k.store(k.reshape(m, {kRows, 1}), out, {row, k.index(0)});
  k.store(k.reshape(t - m, {kRows, kShuffleCols}), centred, {row, k.index(0)});
  return k.build();
}

} // namespace

TEST_CASE("a reduction over threads after one over each thread's vector",
          "[dsl][reduce]") {
  const ops::LoadedKernel &kernel = ops::load_kernel(
      ops::make_key("test_chained_max"), [] { return chained_max_kernel(); });
  const int64_t rows = 37, n = rows * kShuffleCols; // a tail block
  std::vector<float> x(n);
  std::mt19937_64 gen(Catch::rngSeed());
  std::uniform_real_distribution<float> dist(-100, 100);
  for (float &v : x)
    v = dist(gen);
  rt::DeviceBuffer dx(n * 4), dout(rows * 4), dc(n * 4);
  dx.upload(x.data(), n * 4);
  const int64_t shape[2] = {rows, kShuffleCols}, os[2] = {rows, 1};
  launch_rows(
      kernel, rows,
      [&](rt::ArgPack &args) {
        ops::push_tensor(
            args, rt::TensorView::contiguous(dx.ptr(), DType::f32, shape));
        ops::push_tensor(
            args, rt::TensorView::contiguous(dout.ptr(), DType::f32, os));
        ops::push_tensor(
            args, rt::TensorView::contiguous(dc.ptr(), DType::f32, shape));
      },
      /*threads=*/128);
  std::vector<float> got(rows), centred(n);
  dout.download(got.data(), rows * 4);
  dc.download(centred.data(), n * 4);
  size_t bad = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float *row_x = &x[r * kShuffleCols];
    float want = *std::max_element(row_x, row_x + kShuffleCols);
    if (got[r] != want && bad++ < 5)
      UNSCOPED_INFO("row " << r << ": max " << got[r] << ", want " << want);
    for (int64_t c = 0; c < kShuffleCols; ++c)
      if (centred[r * kShuffleCols + c] != row_x[c] - want && bad++ < 5)
        UNSCOPED_INFO("row " << r << " col " << c << ": centred "
                             << centred[r * kShuffleCols + c] << ", want "
                             << row_x[c] - want);
  }
  CHECK(bad == 0);
}

namespace {

/// Where layouts meet, through tile.convert_layout: x (rows, 64) and a
/// column c (rows, 1). shifted = x + c broadcast (a loaded fragment, not a
/// reduction); summed = max(x row) + c (operands in two layouts); carried =
/// c + 3 * max(x row), a loop carrying c in the column's layout whose body
/// yields the reduction's. 32 rows a block over 32 threads: the column is
/// one element a thread.
constexpr int kRelayoutRows = 32;

Kernel relayout_kernel() {
  dsl::KernelBuilder k("relayout", 32);
  auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
  auto c = k.tensor("c", DType::f32, 2);
  auto shifted = k.tensor("shifted", DType::f32, 2, dsl::inner_contiguous(16));
  auto summed = k.tensor("summed", DType::f32, 2);
  auto carried = k.tensor("carried", DType::f32, 2);
  auto row = k.block_id(0) * k.index(kRelayoutRows);
  auto origin = std::vector<dsl::Value>{row, k.index(0)};
  auto t = k.load(x, origin, {kRelayoutRows, kCols});
  auto col = k.load(c, origin, {kRelayoutRows, 1});
  k.store(t + k.broadcast(col, {kRelayoutRows, kCols}), shifted, origin);
  auto rowmax = k.reduce_max(t, 1);
  k.store(rowmax + col, summed, origin);
  auto loop =
      k.serial(k.index(0), k.index(3), {col},
               [&](dsl::Value, std::vector<dsl::Value> v) {
                 return std::vector<dsl::Value>{k.reduce_max(t, 1) + v[0]};
               });
  k.store(loop[0], carried, origin);
  return k.build();
}

} // namespace

TEST_CASE("fragments in different layouts meet through a conversion",
          "[dsl][layout]") {
  const ops::LoadedKernel &kernel = ops::load_kernel(
      ops::make_key("test_relayout"), [] { return relayout_kernel(); });
  const int64_t rows = kRelayoutRows * 3 + 5; // a tail block
  std::vector<float> x = uniform_rows(rows, -8, 8), c(rows);
  for (int64_t r = 0; r < rows; ++r)
    c[r] = static_cast<float>(r) * 0.25f - 3;
  rt::DeviceBuffer dx(x.size() * 4), dc(rows * 4), dshift(x.size() * 4),
      dsum(rows * 4), dcarry(rows * 4);
  dx.upload(x.data(), x.size() * 4);
  dc.upload(c.data(), rows * 4);
  const int64_t xs[2] = {rows, kCols}, cs[2] = {rows, 1};
  launch_rows(
      kernel, rows,
      [&](rt::ArgPack &args) {
        ops::push_tensor(args,
                         rt::TensorView::contiguous(dx.ptr(), DType::f32, xs));
        ops::push_tensor(args,
                         rt::TensorView::contiguous(dc.ptr(), DType::f32, cs));
        ops::push_tensor(
            args, rt::TensorView::contiguous(dshift.ptr(), DType::f32, xs));
        ops::push_tensor(
            args, rt::TensorView::contiguous(dsum.ptr(), DType::f32, cs));
        ops::push_tensor(
            args, rt::TensorView::contiguous(dcarry.ptr(), DType::f32, cs));
      },
      /*threads=*/32, kRelayoutRows);
  std::vector<float> shift(x.size()), sum(rows), carry(rows);
  dshift.download(shift.data(), shift.size() * 4);
  dsum.download(sum.data(), rows * 4);
  dcarry.download(carry.data(), rows * 4);
  size_t bad = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float *row_x = &x[r * kCols];
    float m = *std::max_element(row_x, row_x + kCols);
    for (int64_t j = 0; j < kCols; ++j)
      if (shift[r * kCols + j] != row_x[j] + c[r] && bad++ < 5)
        UNSCOPED_INFO("row " << r << " col " << j << ": shifted "
                             << shift[r * kCols + j] << ", want "
                             << row_x[j] + c[r]);
    float want_carry = ((c[r] + m) + m) + m;
    if ((sum[r] != m + c[r] || carry[r] != want_carry) && bad++ < 5)
      UNSCOPED_INFO("row " << r << ": summed " << sum[r] << " (want "
                           << m + c[r] << "), carried " << carry[r] << " (want "
                           << want_carry << ")");
  }
  CHECK(bad == 0);
}

namespace {

/// x (rows, 64) i32 over 128 threads relaid out to 8 consecutive elements
/// a thread: sums of each 8 (in registers) to sums (rows, 8), and the
/// relaid-out tile stored back to copy (rows, 64), through the kernel's
/// 16-byte layout.
Kernel relayout_sum_kernel() {
  dsl::KernelBuilder k("relayout_sum", 128);
  auto x = k.tensor("x", DType::i32, 2, dsl::inner_contiguous(16));
  auto sums = k.tensor("sums", DType::i32, 2);
  auto copy = k.tensor("copy", DType::i32, 2, dsl::inner_contiguous(16));
  auto row = k.block_id(0) * k.index(kRows);
  auto t = k.relayout(k.load(x, {row, k.index(0)}, {kRows, kCols}), 8);
  auto s = k.reduce_sum(k.reshape(t, {kRows, kCols / 8, 8}), 2);
  k.store(k.reshape(s, {kRows, kCols / 8}), sums, {row, k.index(0)});
  k.store(t, copy, {row, k.index(0)});
  return k.build();
}

} // namespace

TEST_CASE("relayout deals 8 consecutive elements to a thread",
          "[dsl][layout]") {
  const ops::LoadedKernel &kernel = ops::load_kernel(
      ops::make_key("test_relayout_sum"), [] { return relayout_sum_kernel(); });
  const int64_t rows = kRows * 4 + 9, n = rows * kCols; // a tail block
  std::vector<int32_t> x(n);
  std::mt19937_64 gen(Catch::rngSeed());
  for (int32_t &v : x)
    v = static_cast<int32_t>(gen() % 2001) - 1000;
  rt::DeviceBuffer dx(n * 4), dsums(rows * 8 * 4), dcopy(n * 4);
  dx.upload(x.data(), n * 4);
  const int64_t xs[2] = {rows, kCols}, ss[2] = {rows, kCols / 8};
  launch_rows(
      kernel, rows,
      [&](rt::ArgPack &args) {
        ops::push_tensor(args,
                         rt::TensorView::contiguous(dx.ptr(), DType::i32, xs));
        ops::push_tensor(
            args, rt::TensorView::contiguous(dsums.ptr(), DType::i32, ss));
        ops::push_tensor(
            args, rt::TensorView::contiguous(dcopy.ptr(), DType::i32, xs));
      },
      /*threads=*/128);
  std::vector<int32_t> sums(rows * 8), copy(n);
  dsums.download(sums.data(), sums.size() * 4);
  dcopy.download(copy.data(), n * 4);
  size_t bad = 0;
  for (int64_t g = 0; g < n / 8; ++g) {
    int32_t want = 0;
    for (int e = 0; e < 8; ++e)
      want += x[8 * g + e];
    if (sums[g] != want && bad++ < 5)
      UNSCOPED_INFO("group " << g << ": sum " << sums[g] << ", want " << want);
  }
  CHECK(bad == 0);
  CHECK(copy == x);
}
