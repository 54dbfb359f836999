// fill.cpp - The inputs a case table's fills make (fill.h).
#include "fill.h"
#include "random_stream.h"

#include "common/convert.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

namespace tilejit::harness {

namespace {

/// `v` as one element of `dtype` at `at` (integers rounded down).
void put_value(std::byte *at, DType dtype, double v) {
  auto put = [&](auto value) { std::memcpy(at, &value, sizeof(value)); };
  switch (dtype) {
  case DType::f32:
    put(static_cast<float>(v));
    break;
  case DType::f64:
    put(v);
    break;
  case DType::bf16:
    put(ref::f32_to_bf16(static_cast<float>(v)));
    break;
  case DType::f16:
    put(ref::f32_to_f16(static_cast<float>(v)));
    break;
  case DType::e4m3:
    put(ref::f32_to_e4m3(static_cast<float>(v)));
    break;
  case DType::e5m2:
    put(ref::f32_to_e5m2(static_cast<float>(v)));
    break;
  case DType::i32:
    put(static_cast<int32_t>(std::floor(v)));
    break;
  case DType::i64:
    put(static_cast<int64_t>(std::floor(v)));
    break;
  default:
    put(static_cast<uint8_t>(std::floor(v)));
    break;
  }
}

} // namespace

void fill(ref::HostTensor &t, int64_t elements, const Fill &f,
          std::mt19937_64 &gen, int64_t rows_of) {
  std::byte *raw = t.raw();
  const size_t elt = size_of(t.dtype());
  // Element i of an i32 or i64 index tensor.
  auto put_index = [&](int64_t i, int64_t v) {
    if (elt == 4) {
      const auto v32 = static_cast<int32_t>(v);
      std::memcpy(raw + i * 4, &v32, 4);
    } else {
      std::memcpy(raw + i * 8, &v, 8);
    }
  };
  if (f.kind == Fill::Kind::row_indices ||
      f.kind == Fill::Kind::element_indices) {
    std::vector<int64_t> rows(static_cast<size_t>(elements));
    for (int64_t i = 0; i < elements; ++i)
      rows[i] = rows_of > 0 ? i % rows_of : -1;
    std::shuffle(rows.begin(), rows.end(), gen);
    std::bernoulli_distribution pad(f.a);
    for (int64_t i = 0; i < elements; ++i)
      put_index(i, pad(gen) ? -1 : rows[i]);
    return;
  }
  if (f.kind == Fill::Kind::distinct_indices) {
    std::vector<int64_t> rows, slots(static_cast<size_t>(elements));
    std::bernoulli_distribution keep(1 - f.a);
    for (int64_t r = 0; r < rows_of; ++r)
      if (keep(gen))
        rows.push_back(r);
    std::shuffle(rows.begin(), rows.end(), gen);
    std::iota(slots.begin(), slots.end(), int64_t{0});
    std::shuffle(slots.begin(), slots.end(), gen);
    for (int64_t i = 0; i < elements; ++i)
      put_index(i, -1);
    for (size_t i = 0; i < std::min(rows.size(), slots.size()); ++i)
      put_index(slots[i], rows[i]);
    return;
  }
  if (f.kind == Fill::Kind::ids_below) {
    std::bernoulli_distribution none(f.a);
    std::uniform_int_distribution<int64_t> id(
        0, std::max<int64_t>(0, rows_of - 1));
    for (int64_t i = 0; i < elements; ++i)
      put_index(i, none(gen) || rows_of < 1 ? -1 : id(gen));
    return;
  }
  if (f.kind == Fill::Kind::integers) {
    std::uniform_int_distribution<int64_t> value(static_cast<int64_t>(f.a),
                                                 static_cast<int64_t>(f.b));
    for (int64_t i = 0; i < elements; ++i)
      put_index(i, value(gen));
    return;
  }
  if (f.kind == Fill::Kind::psum) {
    // Segment e: from align(end of e - 1) for a share of up to twice an
    // even split of the rows left; ends are clipped to the rows.
    const auto alignment = static_cast<int64_t>(f.a);
    int64_t end = 0;
    for (int64_t e = 0; e < elements; ++e) {
      const int64_t start = (end + alignment - 1) / alignment * alignment;
      const int64_t left = std::max<int64_t>(0, rows_of - start);
      std::uniform_int_distribution<int64_t> share(
          0, 2 * left / std::max<int64_t>(1, elements - e));
      end = std::max(end, std::min(rows_of, start + share(gen)));
      const auto v32 = static_cast<int32_t>(end);
      std::memcpy(raw + e * 4, &v32, 4);
    }
    return;
  }
  // The big fills below in chunks of their own streams (random_stream.h),
  // keyed by one draw of `gen`.
  if (f.kind == Fill::Kind::bytes) {
    for_each_chunk(gen(), elements * static_cast<int64_t>(elt),
                   [&](RandomStream &s, int64_t begin, int64_t end) {
                     for (int64_t i = begin; i < end; ++i)
                       raw[i] = static_cast<std::byte>(s.bits() >> 56);
                   });
    return;
  }
  if (f.kind == Fill::Kind::byte_range) {
    const auto lo = static_cast<uint64_t>(f.a),
               span = static_cast<uint64_t>(f.b - f.a + 1);
    for_each_chunk(gen(), elements * static_cast<int64_t>(elt),
                   [&](RandomStream &s, int64_t begin, int64_t end) {
                     for (int64_t i = begin; i < end; ++i)
                       raw[i] = static_cast<std::byte>(
                           lo + (((s.bits() >> 32) * span) >> 32));
                   });
    return;
  }
  if (f.kind == Fill::Kind::exponents) {
    std::uniform_int_distribution<int> exponent(static_cast<int>(f.a),
                                                static_cast<int>(f.b));
    const bool packed = t.dtype() != DType::f32;
    for (size_t i = 0; i < static_cast<size_t>(elements) * elt; ++i) {
      if (packed) {
        raw[i] = static_cast<std::byte>(exponent(gen) + 127);
      } else if (i % elt == 0) {
        const float v = std::ldexp(1.0f, exponent(gen));
        std::memcpy(raw + i, &v, sizeof v);
      }
    }
    return;
  }
  const bool outside = f.kind == Fill::Kind::normal_outside;
  const bool uniform = f.kind == Fill::Kind::uniform;
  const double mean = outside ? 0 : f.a, stddev = outside ? f.a : f.b;
  const DType dtype = t.dtype();
  for_each_chunk(gen(), elements,
                 [&](RandomStream &s, int64_t begin, int64_t end) {
                   for (int64_t i = begin; i < end; ++i) {
                     double v = uniform ? f.a + (f.b - f.a) * s.unit()
                                        : mean + stddev * s.normal();
                     while (outside && std::fabs(v) < f.b)
                       v = stddev * s.normal();
                     put_value(raw + static_cast<size_t>(i) * elt, dtype, v);
                   }
                 });
}

void inverse_fill(ref::HostTensor &t, const ref::HostTensor &index) {
  const int64_t n = t.numel(), m = index.numel();
  auto at = [](const ref::HostTensor &h, int64_t i) -> int64_t {
    if (h.dtype() == DType::i64)
      return h.data<int64_t>()[i];
    return h.data<int32_t>()[i];
  };
  auto put = [&](int64_t i, int64_t v) {
    if (t.dtype() == DType::i64)
      t.data<int64_t>()[i] = v;
    else
      t.data<int32_t>()[i] = static_cast<int32_t>(v);
  };
  for (int64_t i = 0; i < n; ++i)
    put(i, -1);
  for (int64_t e = 0; e < m; ++e)
    if (const int64_t v = at(index, e); v >= 0 && v < n)
      put(v, e);
}

} // namespace tilejit::harness
