// dsl_layout_gpu_test.cpp - Where the DSL's layouts show, on the GPU: lane
// shuffles along the thread dimension, chained reductions, conversions where
// two layouts meet, and k.relayout.
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
#include <random>
#include <vector>

using namespace tilejit;
using namespace tilejit::dsl_gpu;

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
