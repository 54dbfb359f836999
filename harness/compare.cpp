// compare.cpp - How a case's outputs are compared with the reference's:
// bitwise, allclose, the rows' sum, calc_diff. Elements are decoded a row
// (the last dimension) at a time with the dtype switched once a row, so a
// comparison of 10^8 elements takes a fraction of a second, not seconds.
#include "op_test.h"

#include "common/convert.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cmath>
#include <cstring>
#include <span>
#include <vector>

namespace tilejit::harness {

namespace {

template <class Bits, class Decode>
void decode(const std::byte *p, int64_t stride, int64_t n, double *out,
            Decode &&to_double) {
  for (int64_t i = 0; i < n; ++i) {
    Bits v;
    std::memcpy(&v, p + i * stride * int64_t{sizeof(Bits)}, sizeof v);
    out[i] = static_cast<double>(to_double(v));
  }
}

/// Every code of a narrow float format as a float, from its reference
/// conversion (built once).
template <size_t N> struct Table {
  explicit Table(float (*convert)(uint16_t)) {
    for (size_t i = 0; i < N; ++i)
      value[i] = convert(static_cast<uint16_t>(i));
  }
  float operator()(uint16_t code) const { return value[code]; }
  std::array<float, N> value;
};

const Table<65536> &f16_table() {
  static const Table<65536> t(ref::f16_to_f32);
  return t;
}
const Table<256> &e4m3_table() {
  static const Table<256> t(
      [](uint16_t c) { return ref::e4m3_to_f32(static_cast<uint8_t>(c)); });
  return t;
}
const Table<256> &e5m2_table() {
  static const Table<256> t(
      [](uint16_t c) { return ref::e5m2_to_f32(static_cast<uint8_t>(c)); });
  return t;
}

/// `n` elements of `t` from element offset `base`, `stride` elements apart,
/// as doubles (as ref::element_as_double reads one).
void decode_row(const ref::HostTensor &t, int64_t base, int64_t stride,
                int64_t n, double *out) {
  const std::byte *p = t.raw() + base * int64_t(size_of(t.dtype()));
  auto same = [](auto v) { return v; };
  switch (t.dtype()) {
  case DType::f32:
    return decode<float>(p, stride, n, out, same);
  case DType::f64:
    return decode<double>(p, stride, n, out, same);
  case DType::f16:
    return decode<uint16_t>(p, stride, n, out, f16_table());
  case DType::bf16:
    return decode<uint16_t>(p, stride, n, out, ref::bf16_to_f32);
  case DType::e4m3:
    return decode<uint8_t>(p, stride, n, out, e4m3_table());
  case DType::e5m2:
    return decode<uint8_t>(p, stride, n, out, e5m2_table());
  case DType::i8:
    return decode<int8_t>(p, stride, n, out, same);
  case DType::u8:
    return decode<uint8_t>(p, stride, n, out, same);
  case DType::boolean:
    return decode<uint8_t>(p, stride, n, out,
                           [](uint8_t v) { return v != 0 ? 1 : 0; });
  case DType::i32:
    return decode<int32_t>(p, stride, n, out, same);
  case DType::u32:
    return decode<uint32_t>(p, stride, n, out, same);
  case DType::i64:
    return decode<int64_t>(p, stride, n, out, same);
  case DType::u64:
    return decode<uint64_t>(p, stride, n, out, same);
  }
}

/// The rows (the last dimension; a rank-0 tensor is one row of one) of a
/// tensor in row-major order, each decoded as doubles.
class Rows {
public:
  explicit Rows(const ref::HostTensor &t)
      : t_(t), n_(t.rank() == 0 ? 1 : t.shape().back()),
        step_(t.rank() == 0 ? 0 : t.strides().back()),
        index_(t.shape().size(), 0), values_(static_cast<size_t>(n_)) {}

  bool empty() const { return t_.numel() == 0; }
  /// The current row's multi-index, its last index 0.
  std::span<const int64_t> index() const { return index_; }
  /// The current row's values.
  std::span<const double> values() {
    decode_row(t_, base_, step_, n_, values_.data());
    return values_;
  }
  /// Moves to the next row (an odometer over every dimension but the
  /// last); false past the last.
  bool next() {
    const auto &shape = t_.shape();
    for (int d = t_.rank() - 2; d >= 0; --d) {
      base_ += t_.strides()[d];
      if (++index_[d] < shape[d])
        return true;
      base_ -= shape[d] * t_.strides()[d];
      index_[d] = 0;
    }
    return false;
  }

private:
  const ref::HostTensor &t_;
  int64_t n_, step_, base_ = 0;
  std::vector<int64_t> index_;
  std::vector<double> values_;
};

/// Calls `visit(row, got, want)` for each row of two tensors of one shape,
/// in row-major order, until it returns false; `row` is the row's
/// multi-index with a last index of 0.
template <class Visit>
void for_each_row_pair(const ref::HostTensor &got, const ref::HostTensor &want,
                       Visit &&visit) {
  Rows g(got), w(want);
  if (g.empty())
    return;
  do {
    if (!visit(g.index(), g.values(), w.values()))
      return;
  } while (g.next() && w.next());
}

/// Calls `fn(x)` for each element of `t` in row-major order, as a double.
template <class Fn> void for_each_value(const ref::HostTensor &t, Fn &&fn) {
  Rows r(t);
  if (r.empty())
    return;
  do
    for (double x : r.values())
      fn(x);
  while (r.next());
}

/// `row` with its last index set to `i`, as "a, b, c".
std::string at(std::span<const int64_t> row, int64_t i) {
  std::vector<int64_t> index(row.begin(), row.end());
  if (!index.empty())
    index.back() = i;
  return fmt::format("{}", fmt::join(index, ", "));
}

} // namespace

Compare exact() {
  return {"bitwise equal",
          [](const ref::HostTensor &got, const ref::HostTensor &want,
             const RunData &) { return ref::compare_exact(got, want); }};
}

Compare allclose(double rtol, double atol) {
  return {
      fmt::format("within rtol {}, atol {}", rtol, atol),
      [rtol, atol](const ref::HostTensor &got, const ref::HostTensor &want,
                   const RunData &) -> std::string {
        if (got.shape() != want.shape())
          return fmt::format("got {}, expected {}", got.to_string(),
                             want.to_string());
        std::string diff;
        for_each_row_pair(got, want, [&](auto row, auto g, auto w) {
          for (size_t i = 0; i < g.size(); ++i)
            if (!(std::fabs(g[i] - w[i]) <= atol + rtol * std::fabs(w[i]))) {
              diff = fmt::format("[{}]: {} vs reference {}",
                                 at(row, int64_t(i)), g[i], w[i]);
              return false;
            }
          return true;
        });
        return diff;
      }};
}

Compare rows_summed(double rtol, double atol) {
  return {fmt::format("summed over dim 0, within rtol {}, atol {}", rtol, atol),
          [rtol, atol](const ref::HostTensor &got, const ref::HostTensor &want,
                       const RunData &) -> std::string {
            const int64_t row = want.numel();
            if (got.rank() < 1 || want.rank() < 1 || want.size(0) != 1 ||
                got.numel() != got.size(0) * row)
              return fmt::format("got {}, expected rows of {}", got.to_string(),
                                 want.to_string());
            // got's elements in row-major order, element i added to the
            // sum's element i mod row; want's in the same order.
            std::vector<double> sum(static_cast<size_t>(row), 0.0), w;
            size_t i = 0;
            for_each_value(got, [&](double x) { sum[i++ % size_t(row)] += x; });
            for_each_value(want, [&](double x) { w.push_back(x); });
            for (int64_t j = 0; j < row; ++j)
              if (!(std::fabs(sum[j] - w[j]) <= atol + rtol * std::fabs(w[j])))
                return fmt::format("element {} of the rows' sum: {} vs "
                                   "reference {}",
                                   j, sum[j], w[j]);
            return "";
          }};
}

Compare calc_diff(double max) {
  return {fmt::format("calc_diff below {}", max),
          [max](const ref::HostTensor &got, const ref::HostTensor &want,
                const RunData &) -> std::string {
            if (got.shape() != want.shape())
              return fmt::format("got {}, expected {}", got.to_string(),
                                 want.to_string());
            double dot = 0, squares = 0;
            for_each_row_pair(got, want, [&](auto, auto g, auto w) {
              for (size_t i = 0; i < g.size(); ++i) {
                dot += g[i] * w[i];
                squares += g[i] * g[i] + w[i] * w[i];
              }
              return true;
            });
            const double diff = squares == 0 ? 0 : 1 - 2 * dot / squares;
            if (diff < max)
              return "";
            return fmt::format("calc_diff {:.3g}, requires below {}", diff,
                               max);
          }};
}

} // namespace tilejit::harness
