// common_ref.cpp - The shared scale-factor machinery of §3: formats, the
// sf / sf_inv computation and the three SF layouts (allocate, store, read).
#include "quant/detail.h"

#include "common/convert.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace tilejit::quant {

using detail::align;
using detail::ceil_div;
using detail::fail;

std::string_view fmt_name(Fmt fmt) {
  switch (fmt) {
  case Fmt::e4m3:
    return "e4m3";
  case Fmt::e2m1:
    return "e2m1";
  case Fmt::e5m6:
    return "e5m6";
  }
  return "?";
}

float fmt_max(Fmt fmt) {
  switch (fmt) {
  case Fmt::e4m3:
    return 448.0f;
  case Fmt::e2m1:
    return 6.0f;
  case Fmt::e5m6:
    return 65024.0f;
  }
  return 0.0f;
}

float default_clamp_min(Fmt fmt) {
  // e2m1: 6 * 2^-126, so that sf = clamp / 6 >= 2^-126 (the smallest normal).
  return fmt == Fmt::e2m1 ? std::ldexp(6.0f, -126) : 1e-4f;
}

SfAndInv get_sf_and_inv(float amax, Fmt fmt, bool round_sf,
                        std::optional<float> clamp_min) {
  const float a = std::max(amax, clamp_min.value_or(default_clamp_min(fmt)));
  const float sf = a / fmt_max(fmt);
  if (!round_sf)
    return {sf, fmt_max(fmt) / a, 0};
  // ceil(log2(sf)) for a positive normal sf, in uint32 arithmetic that wraps
  // like the kernel's: ((bits - 1) >> 23) + 1 - 127.
  const uint32_t bits = ref::f32_to_bits(sf);
  const int32_t e = static_cast<int32_t>(((bits - 1u) >> 23) + 1u - 127u);
  const float sf_inv = ref::bits_to_f32(static_cast<uint32_t>(127 - e) << 23);
  const float rounded = ref::bits_to_f32(static_cast<uint32_t>(127 + e) << 23);
  return {rounded, sf_inv, static_cast<uint8_t>(e + 127)};
}

SfAndInv get_e4m3_sf_and_inv(float amax, Fmt fmt,
                             std::optional<float> clamp_min) {
  const float a =
      std::max(amax, clamp_min.value_or(std::ldexp(fmt_max(fmt), -9)));
  const float sf = ref::e4m3_to_f32(ref::f32_to_e4m3(a / fmt_max(fmt)));
  return {sf, 1.0f / sf, 0};
}

HostTensor alloc_e4m3_sf(int64_t sf_rows, int64_t num_groups, bool col_major) {
  if (!col_major)
    return HostTensor::zeros(DType::e4m3, {sf_rows, num_groups});
  const int64_t shape[] = {sf_rows, num_groups},
                strides[] = {1, align(sf_rows, 16)};
  return HostTensor::zeros_strided(DType::e4m3, shape, strides);
}

SfLayout sf_layout_of(bool use_tma_aligned_col_major_sf,
                      bool use_packed_ue8m0) {
  if (use_packed_ue8m0)
    return SfLayout::packed_ue8m0;
  return use_tma_aligned_col_major_sf ? SfLayout::col_major
                                      : SfLayout::row_major;
}

HostTensor alloc_sf(int64_t sf_rows, int64_t num_groups, SfLayout layout) {
  const int64_t ld = align(sf_rows, 4);
  switch (layout) {
  case SfLayout::row_major:
    return HostTensor::zeros(DType::f32, {sf_rows, num_groups});
  case SfLayout::col_major: {
    const int64_t shape[] = {sf_rows, num_groups}, strides[] = {1, ld};
    return HostTensor::zeros_strided(DType::f32, shape, strides);
  }
  case SfLayout::packed_ue8m0: {
    const int64_t shape[] = {sf_rows, ceil_div(num_groups, 4)};
    const int64_t strides[] = {1, ld};
    return HostTensor::zeros_strided(DType::i32, shape, strides);
  }
  }
  return {};
}

void store_sf(const HostTensor &sf, int64_t m, int64_t k, const SfAndInv &s) {
  if (sf.dtype() == DType::i32) {
    int32_t &word = sf.at<int32_t>({m, k / 4});
    const int shift = static_cast<int>(8 * (k % 4));
    uint32_t w = static_cast<uint32_t>(word);
    w = (w & ~(0xFFu << shift)) | (uint32_t{s.ue8m0} << shift);
    word = static_cast<int32_t>(w);
  } else if (sf.dtype() == DType::e4m3) {
    sf.at<uint8_t>({m, k}) = ref::f32_to_e4m3(s.sf); // exact: an e4m3 value
  } else {
    sf.at<float>({m, k}) = s.sf;
  }
}

float read_sf(const HostTensor &sf, int64_t m, int64_t k) {
  if (sf.dtype() == DType::i32) {
    const uint32_t w = static_cast<uint32_t>(sf.at<int32_t>({m, k / 4}));
    return ref::ue8m0_to_f32(static_cast<uint8_t>(w >> (8 * (k % 4))));
  }
  if (sf.dtype() == DType::e4m3)
    return ref::e4m3_to_f32(sf.at<uint8_t>({m, k}));
  return sf.at<float>({m, k});
}

void check_sf_input(std::string_view function, std::string_view argument,
                    const HostTensor &sf, int64_t sf_rows, int64_t num_groups) {
  detail::check_rank(function, argument, sf, 2);
  const bool col_major = sf.stride(0) == 1;
  if (sf.dtype() == DType::e4m3) { // 2.1's E4M3 scales, either layout
    if (sf.stride(0) != 1 && sf.stride(1) != 1)
      fail(function, fmt::format("argument '{}' is {}; requires an e4m3 SF "
                                 "with stride(1) == 1 (row-major) or "
                                 "stride(0) == 1 (column-major)",
                                 argument, sf.to_string()));
  } else if (col_major) {
    if (sf.dtype() != DType::f32 && sf.dtype() != DType::i32)
      fail(function, fmt::format("argument '{}' is column-major (stride(0) == "
                                 "1) with dtype {}; requires f32, or i32 "
                                 "(packed UE8M0)",
                                 argument, name_of(sf.dtype())));
  } else if (sf.stride(1) != 1 || sf.dtype() != DType::f32) {
    fail(function, fmt::format("argument '{}' is {}; requires a float32 SF "
                               "with stride(1) == 1 (row-major) or "
                               "stride(0) == 1 (column-major)",
                               argument, sf.to_string()));
  }
  const int64_t cols =
      sf.dtype() == DType::i32 ? ceil_div(num_groups, 4) : num_groups;
  if (sf.size(0) != sf_rows || sf.size(1) != cols)
    fail(function,
         fmt::format(
             "argument '{}' has shape [{}, {}]; requires [{}, {}]{}", argument,
             sf.size(0), sf.size(1), sf_rows, cols,
             sf.dtype() == DType::i32
                 ? fmt::format(" (packed UE8M0 of {} groups)", num_groups)
                 : std::string()));
}

int64_t logical_cols(const HostTensor &data) {
  const int64_t cols = data.rank() >= 1 ? data.size(data.rank() - 1) : 0;
  switch (data.dtype()) {
  case DType::i8:
    return 2 * cols;
  case DType::u8:
    return cols * 2 / 3;
  default:
    return cols;
  }
}

} // namespace tilejit::quant
