// dsl_gpu_test.cpp - DSL constructs that no proving kernel uses yet, run on
// the GPU against plain C++: serial loops carrying fragments (a blocked one
// and a reduction result), unrolled loops, if_else on a run-time scalar;
// log, log1p and softplus against double precision; casts from fp8;
// atomics; shared tiles around a barrier; scatter. Narrow formats:
// dsl_cast_gpu_test; shuffles and layouts: dsl_layout_gpu_test.
#include "dsl_gpu.h"

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
using namespace tilejit::dsl_gpu;

namespace {

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

/// out[pos[r], :] = x[r, :] * 2 and maxes[pos[r], 0] = max of x's row r: a
/// scatter of a tile and of a reduction result; and neg = 0 where x < 0 (a
/// masked store).
Kernel scatter_kernel() {
  dsl::KernelBuilder k("scatter", 256);
  auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
  auto pos = k.tensor("pos", DType::i32, 1);
  auto out = k.tensor("out", DType::f32, 2, dsl::inner_contiguous(16));
  auto maxes = k.tensor("maxes", DType::f32, 2);
  auto neg = k.tensor("neg", DType::f32, 2);
  auto row = k.block_id(0) * k.index(kRows);
  auto t = k.load(x, {row, k.index(0)}, {kRows, kCols});
  k.scatter(t * k.constant(2, DType::f32), out, pos, {row, k.index(0)});
  k.scatter(k.reduce_max(t, 1), maxes, pos, {row, k.index(0)});
  auto zeros = k.full({kRows, kCols}, 0, DType::f32);
  k.store_where(k.lt(t, zeros), zeros, neg, {row, k.index(0)});
  return k.build();
}

} // namespace

TEST_CASE("scatter writes each row where its index says and drops the rest; "
          "store_where writes where its mask holds",
          "[dsl][scatter]") {
  const ops::LoadedKernel &kernel =
      ops::load_kernel(ops::make_key("test_scatter"), scatter_kernel);
  // A tail block; pos is 5 rows shorter than x (those rows are dropped),
  // and holds a permutation of out's rows with -1 (padding) and indices
  // past out's end mixed in.
  const int64_t rows = 12 * kRows + 9, indexed = rows - 5,
                out_rows = indexed + 40;
  std::vector<float> x = uniform_rows(rows, -100, 100);
  std::vector<int32_t> pos(indexed);
  std::mt19937_64 gen(Catch::rngSeed());
  std::vector<int32_t> targets(out_rows);
  std::iota(targets.begin(), targets.end(), 0);
  std::shuffle(targets.begin(), targets.end(), gen);
  for (int64_t r = 0; r < indexed; ++r)
    pos[r] = r % 7 == 3    ? -1
             : r % 11 == 5 ? static_cast<int32_t>(out_rows + r)
                           : targets[r];
  const float sentinel = -12345.0f;
  std::vector<float> out(out_rows * kCols, sentinel), maxes(out_rows, sentinel),
      neg(x.size(), sentinel);
  rt::DeviceBuffer dx(x.size() * 4), dpos(pos.size() * 4), dout(out.size() * 4),
      dmax(maxes.size() * 4), dneg(neg.size() * 4);
  dneg.upload(neg.data(), neg.size() * 4);
  dx.upload(x.data(), x.size() * 4);
  dpos.upload(pos.data(), pos.size() * 4);
  dout.upload(out.data(), out.size() * 4);
  dmax.upload(maxes.data(), maxes.size() * 4);
  const int64_t xs[2] = {rows, kCols}, ps[1] = {indexed},
                os[2] = {out_rows, kCols}, ms[2] = {out_rows, 1};
  launch_rows(kernel, rows, [&](rt::ArgPack &args) {
    ops::push_tensor(args,
                     rt::TensorView::contiguous(dx.ptr(), DType::f32, xs));
    ops::push_tensor(args,
                     rt::TensorView::contiguous(dpos.ptr(), DType::i32, ps));
    ops::push_tensor(args,
                     rt::TensorView::contiguous(dout.ptr(), DType::f32, os));
    ops::push_tensor(args,
                     rt::TensorView::contiguous(dmax.ptr(), DType::f32, ms));
    ops::push_tensor(args,
                     rt::TensorView::contiguous(dneg.ptr(), DType::f32, xs));
  });
  std::vector<float> want_out(out.size(), sentinel),
      want_max(out_rows, sentinel);
  for (int64_t r = 0; r < indexed; ++r) {
    if (pos[r] < 0 || pos[r] >= out_rows)
      continue;
    float m = -INFINITY;
    for (int c = 0; c < kCols; ++c) {
      want_out[pos[r] * kCols + c] = x[r * kCols + c] * 2;
      m = std::max(m, x[r * kCols + c]);
    }
    want_max[pos[r]] = m;
  }
  dout.download(out.data(), out.size() * 4);
  dmax.download(maxes.data(), maxes.size() * 4);
  size_t bad = 0, written = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    bad += out[i] != want_out[i];
    written += want_out[i] != sentinel;
  }
  for (int64_t r = 0; r < out_rows; ++r)
    bad += maxes[r] != want_max[r];
  dneg.download(neg.data(), neg.size() * 4);
  size_t zeroed = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    bad += neg[i] != (x[i] < 0 ? 0.0f : sentinel);
    zeroed += x[i] < 0;
  }
  CHECK(zeroed > 0);
  CHECK(written > 0);
  CHECK(written < out.size()); // some rows are left as they were
  CHECK(bad == 0);
}
