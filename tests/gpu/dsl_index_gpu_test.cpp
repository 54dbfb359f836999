// dsl_index_gpu_test.cpp - k.take and k.put on the GPU: per-thread arrays
// (rows laid out one a thread) indexed by a position per row and by a loop
// variable, and a lookup across the threads of a row, bit for bit; k.load_at
// (a table read at per-element positions).
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
#include <limits>
#include <random>
#include <vector>

using namespace tilejit;
using namespace tilejit::dsl_gpu;

namespace {

constexpr int kBlockRows = 128, kLocal = 8, kWide = 64;

/// A block of 128 threads, one row of x (rows, 8) f32 a thread:
/// picked = x[r, at[r]], put = x with x[r, at[r]] = 2 picked + 1, reversed
/// = x[r, 7 - j] built by a loop of take/put at the loop's index; and
/// across threads: wide_picked = y[r, at_wide[r]] for y (rows, 64) bf16 in
/// the kernel's own layout.
Kernel index_kernel() {
  dsl::KernelBuilder k("take_put", 128);
  auto x = k.tensor("x", DType::f32, 2);
  auto at = k.tensor("at", DType::i32, 2);
  auto picked = k.tensor("picked", DType::f32, 2);
  auto put = k.tensor("put", DType::f32, 2);
  auto reversed = k.tensor("reversed", DType::f32, 2);
  auto y = k.tensor("y", DType::bf16, 2, dsl::inner_contiguous(16));
  auto at_wide = k.tensor("at_wide", DType::i32, 2);
  auto wide_picked = k.tensor("wide_picked", DType::bf16, 2);
  auto row = k.block_id(0) * k.index(kBlockRows);
  auto zero = k.index(0);
  auto local = k.relayout(k.load(x, {row, zero}, {kBlockRows, kLocal}), kLocal);
  auto where = k.load(at, {row, zero}, {kBlockRows, 1});
  auto t = k.take(local, 1, where);
  k.store(t, picked, {row, zero});
  k.store(k.put(local, 1, where,
                t * k.constant(2, DType::f32) + k.constant(1, DType::f32)),
          put, {row, zero});
  auto rev = k.serial(k.index(0), k.index(kLocal), {local},
                      [&](dsl::Value i, std::vector<dsl::Value> carried) {
                        return std::vector{k.put(carried[0], 1,
                                                 k.index(kLocal - 1) - i,
                                                 k.take(local, 1, i))};
                      })[0];
  k.store(rev, reversed, {row, zero});
  auto wide = k.load(y, {row, zero}, {kBlockRows, kWide});
  k.store(k.take(wide, 1, k.load(at_wide, {row, zero}, {kBlockRows, 1})),
          wide_picked, {row, zero});
  return k.build();
}

uint32_t bits_of(float v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  return b;
}

} // namespace

TEST_CASE("take and put index fragments at run-time positions",
          "[dsl][index]") {
  const ops::LoadedKernel &kernel = ops::load_kernel(
      ops::make_key("test_take_put"), [] { return index_kernel(); });
  const int64_t rows = 200; // a tail block
  std::mt19937_64 gen(Catch::rngSeed());
  std::uniform_real_distribution<float> dist(-10, 10);
  std::uniform_int_distribution<int> position(-2, kLocal + 1),
      wide_position(-1, kWide);
  std::vector<float> x(rows * kLocal);
  for (float &v : x)
    v = dist(gen);
  x[3] = -0.0f; // bits, not sums: the sign of zero and NaN survive
  x[kLocal + 5] = std::numeric_limits<float>::quiet_NaN();
  std::vector<int32_t> at(rows), at_wide(rows);
  for (int32_t &p : at)
    p = position(gen); // also outside [0, 8): reads 0, puts nothing
  at[0] = 3;
  at[1] = 5;
  for (int32_t &p : at_wide)
    p = wide_position(gen);
  std::vector<uint16_t> y(rows * kWide);
  for (uint16_t &v : y)
    v = ref::f32_to_bf16(dist(gen));
  y[7] = 0x8000; // -0.0
  at_wide[0] = 7;

  rt::DeviceBuffer dx(x.size() * 4), dat(rows * 4), dpicked(rows * 4),
      dput(x.size() * 4), drev(x.size() * 4), dy(y.size() * 2),
      dat_wide(rows * 4), dwide(rows * 2);
  dx.upload(x.data(), x.size() * 4);
  dat.upload(at.data(), rows * 4);
  dy.upload(y.data(), y.size() * 2);
  dat_wide.upload(at_wide.data(), rows * 4);
  const int64_t local_shape[2] = {rows, kLocal}, column[2] = {rows, 1},
                wide_shape[2] = {rows, kWide};
  launch_rows(
      kernel, rows,
      [&](rt::ArgPack &args) {
        auto push = [&](const rt::DeviceBuffer &b, DType t,
                        const int64_t(&shape)[2]) {
          ops::push_tensor(args, rt::TensorView::contiguous(b.ptr(), t, shape));
        };
        push(dx, DType::f32, local_shape);
        push(dat, DType::i32, column);
        push(dpicked, DType::f32, column);
        push(dput, DType::f32, local_shape);
        push(drev, DType::f32, local_shape);
        push(dy, DType::bf16, wide_shape);
        push(dat_wide, DType::i32, column);
        push(dwide, DType::bf16, column);
      },
      /*threads=*/128, kBlockRows);
  std::vector<float> picked(rows), put(x.size()), rev(x.size());
  std::vector<uint16_t> wide(rows);
  dpicked.download(picked.data(), rows * 4);
  dput.download(put.data(), put.size() * 4);
  drev.download(rev.data(), rev.size() * 4);
  dwide.download(wide.data(), rows * 2);

  size_t bad = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const bool inside = at[r] >= 0 && at[r] < kLocal;
    const float want = inside ? x[r * kLocal + at[r]] : 0.0f;
    if (bits_of(picked[r]) != bits_of(want) && bad++ < 5)
      UNSCOPED_INFO("row " << r << " at " << at[r] << ": took " << picked[r]
                           << ", want " << want);
    for (int64_t j = 0; j < kLocal; ++j) {
      const float was = x[r * kLocal + j];
      const float want_put = inside && j == at[r] ? 2 * want + 1 : was;
      const bool same = std::isnan(want_put)
                            ? std::isnan(put[r * kLocal + j])
                            : bits_of(put[r * kLocal + j]) == bits_of(want_put);
      if (!same && bad++ < 5)
        UNSCOPED_INFO("row " << r << " col " << j << ": put "
                             << put[r * kLocal + j] << ", want " << want_put);
      const float want_rev = x[r * kLocal + kLocal - 1 - j];
      if (bits_of(rev[r * kLocal + j]) != bits_of(want_rev) && bad++ < 5)
        UNSCOPED_INFO("row " << r << " col " << j << ": reversed "
                             << rev[r * kLocal + j] << ", want " << want_rev);
    }
    const bool wide_inside = at_wide[r] >= 0 && at_wide[r] < kWide;
    const uint16_t want_wide = wide_inside ? y[r * kWide + at_wide[r]] : 0;
    if (wide[r] != want_wide && bad++ < 5)
      UNSCOPED_INFO("row " << r << " at " << at_wide[r] << ": took bf16 0x"
                           << std::hex << wide[r] << ", want 0x" << want_wide
                           << std::dec);
  }
  CHECK(bad == 0);
}

namespace {

/// A block a row of 128 f32: at[b] < 0 gives -1 (a branch on a scalar read
/// from memory), else table[at[b]] (a load_scalar at an integer scalar; 0
/// past the table) in every column.
Kernel scalar_kernel() {
  dsl::KernelBuilder k("load_scalar", 128);
  auto at = k.tensor("at", DType::i32, 1);
  auto table = k.tensor("table", DType::f32, 1);
  auto out = k.tensor("out", DType::f32, 2);
  auto b = k.block_id(0), zero = k.index(0);
  auto s = k.load_scalar(at, {b});
  auto v = k.load_scalar(table, {s});
  k.if_else(
      k.lt(s, k.constant(0, DType::i32)), {},
      [&](dsl::Value, std::vector<dsl::Value>) {
        k.store(k.full({1, 128}, -1.0, DType::f32), out, {b, zero});
        return std::vector<dsl::Value>{};
      },
      [&](dsl::Value, std::vector<dsl::Value>) {
        k.store(k.full({1, 128}, 0.0, DType::f32) + v, out, {b, zero});
        return std::vector<dsl::Value>{};
      });
  return k.build();
}

} // namespace

TEST_CASE("load_scalar reads one element for every thread, branches on it",
          "[dsl][index]") {
  const ops::LoadedKernel &kernel = ops::load_kernel(
      ops::make_key("test_load_scalar"), [] { return scalar_kernel(); });
  const int64_t rows = 300, entries = 50;
  std::mt19937_64 gen(Catch::rngSeed());
  std::uniform_int_distribution<int32_t> position(-3, entries + 3);
  std::vector<int32_t> at(rows);
  for (int32_t &p : at)
    p = position(gen); // negative (-1 rows), inside, past the table (0)
  std::vector<float> table(entries);
  for (int64_t i = 0; i < entries; ++i)
    table[i] = 0.5f * static_cast<float>(i) + 1.0f;
  rt::DeviceBuffer dat(rows * 4), dtable(entries * 4), dout(rows * 128 * 4);
  dat.upload(at.data(), rows * 4);
  dtable.upload(table.data(), entries * 4);
  const int64_t at_shape[1] = {rows}, table_shape[1] = {entries},
                out_shape[2] = {rows, 128};
  launch_rows(
      kernel, rows,
      [&](rt::ArgPack &args) {
        ops::push_tensor(
            args, rt::TensorView::contiguous(dat.ptr(), DType::i32, at_shape));
        ops::push_tensor(args, rt::TensorView::contiguous(
                                   dtable.ptr(), DType::f32, table_shape));
        ops::push_tensor(args, rt::TensorView::contiguous(
                                   dout.ptr(), DType::f32, out_shape));
      },
      /*threads=*/128, /*block_rows=*/1);
  std::vector<float> out(rows * 128);
  dout.download(out.data(), out.size() * 4);
  size_t bad = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float want = at[r] < 0         ? -1.0f
                       : at[r] < entries ? table[at[r]]
                                         : 0.0f;
    for (int64_t j = 0; j < 128; ++j)
      if (out[r * 128 + j] != want && bad++ < 5)
        UNSCOPED_INFO("row " << r << " (at " << at[r] << ") col " << j << ": "
                             << out[r * 128 + j] << ", want " << want);
  }
  CHECK(bad == 0);
}

namespace {

constexpr int kScanRows = 16, kScanCols = 40; // a dimension of no power of two

/// A block's (16, 40) i32 tile: its prefix sums along each row and down
/// each column (within the block's 16 rows).
Kernel scan_kernel() {
  dsl::KernelBuilder k("cumsum", 128);
  auto x = k.tensor("x", DType::i32, 2);
  auto along_rows = k.tensor("along_rows", DType::i32, 2);
  auto along_cols = k.tensor("along_cols", DType::i32, 2);
  auto row = k.block_id(0) * k.index(kScanRows), zero = k.index(0);
  auto t = k.load(x, {row, zero}, {kScanRows, kScanCols});
  k.store(k.cumsum(t, 1), along_rows, {row, zero});
  k.store(k.cumsum(t, 0), along_cols, {row, zero});
  return k.build();
}

} // namespace

TEST_CASE("cumsum gives prefix sums along either dimension", "[dsl][index]") {
  const ops::LoadedKernel &kernel = ops::load_kernel(
      ops::make_key("test_cumsum"), [] { return scan_kernel(); });
  const int64_t rows = 5 * kScanRows;
  std::mt19937_64 gen(Catch::rngSeed());
  std::uniform_int_distribution<int32_t> value(-100, 100);
  std::vector<int32_t> x(rows * kScanCols);
  for (int32_t &v : x)
    v = value(gen);
  rt::DeviceBuffer dx(x.size() * 4), drows(x.size() * 4), dcols(x.size() * 4);
  dx.upload(x.data(), x.size() * 4);
  const int64_t shape[2] = {rows, kScanCols};
  launch_rows(
      kernel, rows,
      [&](rt::ArgPack &args) {
        for (const rt::DeviceBuffer *b : {&dx, &drows, &dcols})
          ops::push_tensor(
              args, rt::TensorView::contiguous(b->ptr(), DType::i32, shape));
      },
      /*threads=*/128, kScanRows);
  std::vector<int32_t> along_rows(x.size()), along_cols(x.size());
  drows.download(along_rows.data(), x.size() * 4);
  dcols.download(along_cols.data(), x.size() * 4);
  size_t bad = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < kScanCols; ++c) {
      int32_t want_row = 0, want_col = 0;
      for (int64_t j = 0; j <= c; ++j)
        want_row += x[r * kScanCols + j];
      for (int64_t i = r - r % kScanRows; i <= r; ++i)
        want_col += x[i * kScanCols + c];
      const int64_t at = r * kScanCols + c;
      if ((along_rows[at] != want_row || along_cols[at] != want_col) &&
          bad++ < 5)
        UNSCOPED_INFO("[" << r << ", " << c << "]: " << along_rows[at] << " / "
                          << along_cols[at] << ", want " << want_row << " / "
                          << want_col);
    }
  CHECK(bad == 0);
}

namespace {

constexpr int kAtRows = 16, kAtCols = 8, kTableRows = 20, kTableCols = 7;

/// A block's (16, 8) positions into an i64 table (20, 7): picked[r, j] =
/// table[rows[r, j], cols[r, j]] (i32 and i64 indices), column3[r, j] =
/// table[rows[r, j], 3] (a scalar index), and top[r] = table[max_j rows[r,
/// j], 0] (indices from a reduction, a copy in several threads).
Kernel load_at_kernel() {
  dsl::KernelBuilder k("load_at", 128);
  auto table = k.tensor("table", DType::i64, 2);
  auto rows = k.tensor("rows", DType::i32, 2);
  auto cols = k.tensor("cols", DType::i64, 2);
  auto picked = k.tensor("picked", DType::i64, 2);
  auto column3 = k.tensor("column3", DType::i64, 2);
  auto top = k.tensor("top", DType::i64, 2);
  auto row = k.block_id(0) * k.index(kAtRows), zero = k.index(0);
  auto r = k.load(rows, {row, zero}, {kAtRows, kAtCols});
  auto c = k.load(cols, {row, zero}, {kAtRows, kAtCols});
  k.store(k.load_at(table, {r, c}), picked, {row, zero});
  k.store(k.load_at(table, {r, k.index(3)}), column3, {row, zero});
  k.store(k.load_at(table, {k.reduce_max(r, 1), zero}), top, {row, zero});
  return k.build();
}

} // namespace

TEST_CASE("load_at reads a table at per-element positions, 0 outside",
          "[dsl][index]") {
  const ops::LoadedKernel &kernel = ops::load_kernel(
      ops::make_key("test_load_at"), [] { return load_at_kernel(); });
  const int64_t rows = 5 * kAtRows + 3, n = rows * kAtCols;
  std::mt19937_64 gen(Catch::rngSeed());
  // Negative, inside and past the end along each dimension.
  std::uniform_int_distribution<int32_t> row_at(-2, kTableRows + 1);
  std::uniform_int_distribution<int64_t> col_at(-2, kTableCols + 1);
  std::vector<int32_t> r(n);
  std::vector<int64_t> c(n), table(kTableRows * kTableCols);
  for (int64_t i = 0; i < n; ++i) {
    r[i] = row_at(gen);
    c[i] = col_at(gen);
  }
  for (int64_t i = 0; i < kTableRows * kTableCols; ++i)
    table[i] = (int64_t{1} << 40) + 3 * i + 1; // no 0, bits above 32
  rt::DeviceBuffer dtable(table.size() * 8), dr(n * 4), dc(n * 8),
      dpicked(n * 8), dcol3(n * 8), dtop(rows * 8);
  dtable.upload(table.data(), table.size() * 8);
  dr.upload(r.data(), n * 4);
  dc.upload(c.data(), n * 8);
  const int64_t ts[2] = {kTableRows, kTableCols}, ps[2] = {rows, kAtCols},
                tops[2] = {rows, 1};
  launch_rows(
      kernel, rows,
      [&](rt::ArgPack &args) {
        ops::push_tensor(
            args, rt::TensorView::contiguous(dtable.ptr(), DType::i64, ts));
        ops::push_tensor(args,
                         rt::TensorView::contiguous(dr.ptr(), DType::i32, ps));
        ops::push_tensor(args,
                         rt::TensorView::contiguous(dc.ptr(), DType::i64, ps));
        for (rt::DeviceBuffer *out : {&dpicked, &dcol3})
          ops::push_tensor(
              args, rt::TensorView::contiguous(out->ptr(), DType::i64, ps));
        ops::push_tensor(
            args, rt::TensorView::contiguous(dtop.ptr(), DType::i64, tops));
      },
      /*threads=*/128, /*block_rows=*/kAtRows);
  std::vector<int64_t> picked(n), col3(n), top(rows);
  dpicked.download(picked.data(), n * 8);
  dcol3.download(col3.data(), n * 8);
  dtop.download(top.data(), rows * 8);
  auto at = [&](int64_t i, int64_t j) -> int64_t {
    return i >= 0 && i < kTableRows && j >= 0 && j < kTableCols
               ? table[i * kTableCols + j]
               : 0;
  };
  size_t bad = 0, outside = 0;
  for (int64_t i = 0; i < n; ++i) {
    bad += picked[i] != at(r[i], c[i]);
    bad += col3[i] != at(r[i], 3);
    outside += at(r[i], c[i]) == 0;
  }
  for (int64_t t = 0; t < rows; ++t)
    bad += top[t] !=
           at(*std::max_element(&r[t * kAtCols], &r[t * kAtCols] + kAtCols), 0);
  CHECK(outside > 0);
  CHECK(outside < static_cast<size_t>(n));
  CHECK(bad == 0);
}
