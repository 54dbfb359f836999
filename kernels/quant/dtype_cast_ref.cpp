// dtype_cast_ref.cpp - TileKernels 2.1's element-wise quant.cast
// (shared/specs/tk21_ops.md §3.1, without stochastic rounding): x.to(dtype)
// for f32, bf16 and e4m3, element by element.
#include "quant/detail.h"
#include "quant/reference.h"

#include "common/convert.h"

#include <algorithm>
#include <fmt/format.h>

namespace tilejit::quant {

namespace {

/// The exact f32 value of element i of `t` (f32, bf16 or e4m3).
float load(const HostTensor &t, int64_t i) {
  switch (t.dtype()) {
  case DType::bf16:
    return ref::bf16_to_f32(t.data<uint16_t>()[i]);
  case DType::e4m3:
    return ref::e4m3_to_f32(t.data<uint8_t>()[i]);
  default:
    return t.data<float>()[i];
  }
}

/// `v` rounded to nearest even into element i of `t` (e4m3 saturating).
void store(const HostTensor &t, int64_t i, float v) {
  switch (t.dtype()) {
  case DType::bf16:
    t.data<uint16_t>()[i] = ref::f32_to_bf16(v);
    return;
  case DType::e4m3:
    t.data<uint8_t>()[i] = ref::f32_to_e4m3(v);
    return;
  default:
    t.data<float>()[i] = v;
  }
}

} // namespace

HostTensor dtype_cast_ref(const HostTensor &x, DType dtype) {
  constexpr std::string_view fn = "dtype_cast_ref";
  const std::initializer_list<DType> kinds = {DType::f32, DType::bf16,
                                              DType::e4m3};
  detail::check_dtype(fn, "x", x, kinds);
  detail::check_contiguous(fn, "x", x);
  if (std::find(kinds.begin(), kinds.end(), dtype) == kinds.end())
    detail::fail(fn, fmt::format("argument 'dtype' is {}; requires f32, bf16 "
                                 "or e4m3",
                                 name_of(dtype)));
  HostTensor out = HostTensor::zeros(dtype, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i)
    store(out, i, load(x, i));
  return out;
}

} // namespace tilejit::quant
