// per_block_cast_lossless_ref.cpp - per_block_cast_lossless (§9): re-blocks
// power-of-two-scaled packed fp4 into e4m3 exactly, by exponent arithmetic.
#include "quant/detail.h"

#include "common/convert.h"

#include <algorithm>
#include <fmt/format.h>

namespace tilejit::quant {

using detail::ceil_div;
using detail::fail;

namespace {

bool is_power_of_two(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

/// Biased exponent of input SF (m, k): the UE8M0 byte, or float bits >> 23.
uint32_t sf_exponent(const HostTensor &sf, int64_t m, int64_t k) {
  if (sf.dtype() == DType::i32)
    return (static_cast<uint32_t>(sf.at<int32_t>({m, k / 4})) >>
            (8 * (k % 4))) &
           0xFF;
  return ref::f32_to_bits(sf.at<float>({m, k})) >> 23;
}

void check_args(std::string_view fn, const QuantTensor &x, BlockSize in,
                BlockSize out, bool col_major, bool packed) {
  detail::check_rank(fn, "x.data", x.data, 2);
  detail::check_dtype(fn, "x.data", x.data, {DType::i8});
  detail::check_contiguous(fn, "x.data", x.data);
  const int64_t M = x.data.size(0), K = logical_cols(x.data);
  if (K % 32 != 0)
    fail(fn, fmt::format("x.data has logical K = {}; requires K % 32 == 0", K));
  detail::check_block_size(fn, "x_block_size", in);
  detail::check_block_size(fn, "out_block_size", out);
  if (!is_power_of_two(in.bk))
    fail(fn, fmt::format("argument 'x_block_size' is ({}, {}); requires a "
                         "power-of-two bk",
                         in.bm, in.bk));
  if (!is_power_of_two(out.bk))
    fail(fn, fmt::format("argument 'out_block_size' is ({}, {}); requires a "
                         "power-of-two bk",
                         out.bm, out.bk));
  if (out.bm % in.bm != 0 || out.bk % in.bk != 0)
    fail(fn, fmt::format("argument 'out_block_size' is ({}, {}); requires "
                         "multiples of x_block_size ({}, {})",
                         out.bm, out.bk, in.bm, in.bk));
  // round_sf is ignored (the output scale is always a power of two), so
  // packed needs only the column-major layout.
  if (packed && !col_major)
    fail(fn, "argument 'use_packed_ue8m0' is true with "
             "use_tma_aligned_col_major_sf=false; requires it to be true");
  const int64_t rows = ceil_div(M, in.bm), groups = ceil_div(K, in.bk);
  check_sf_input(fn, "x.sf", x.sf, rows, groups);
  if (x.sf.dtype() == DType::f32)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t k = 0; k < groups; ++k)
        // A power of two: zero mantissa. We also reject a negative sign,
        // which the original would read as exponent 256 + e.
        if ((ref::f32_to_bits(x.sf.at<float>({i, k})) & 0x807FFFFFu) != 0)
          fail(fn, fmt::format("x.sf[{}, {}] is {}; requires a non-negative "
                               "power of two (zero mantissa)",
                               i, k, x.sf.at<float>({i, k})));
}

} // namespace

QuantTensor per_block_cast_lossless_ref(const QuantTensor &x,
                                        std::string_view fmt,
                                        BlockSize x_block_size,
                                        BlockSize out_block_size,
                                        bool use_tma_aligned_col_major_sf,
                                        bool round_sf, bool use_packed_ue8m0) {
  constexpr std::string_view fn = "per_block_cast_lossless_ref";
  detail::parse_fmt(fn, fmt, {Fmt::e4m3});
  check_args(fn, x, x_block_size, out_block_size, use_tma_aligned_col_major_sf,
             use_packed_ue8m0);
  (void)round_sf; // ignored, as in the original
  const int64_t M = x.data.size(0), K = logical_cols(x.data);
  const BlockSize in = x_block_size, ob = out_block_size;
  QuantTensor out;
  out.data = HostTensor::zeros(DType::e4m3, {M, K});
  out.sf =
      alloc_sf(ceil_div(M, ob.bm), ceil_div(K, ob.bk),
               sf_layout_of(use_tma_aligned_col_major_sf, use_packed_ue8m0));
  const int64_t in_rows = ceil_div(M, in.bm), in_groups = ceil_div(K, in.bk);
  for (int64_t bi = 0; bi < out.sf.size(0); ++bi) {
    for (int64_t bk = 0; bk < ceil_div(K, ob.bk); ++bk) {
      // The input blocks inside this output block that hold a real element;
      // blocks entirely out of range would count as exponent 0 and never
      // win the max, so they are skipped.
      const int64_t i0 = bi * ob.bm / in.bm;
      const int64_t i1 = std::min(in_rows, (bi + 1) * ob.bm / in.bm);
      const int64_t k0 = bk * ob.bk / in.bk;
      const int64_t k1 = std::min(in_groups, (bk + 1) * ob.bk / in.bk);
      uint32_t e_max = 0;
      for (int64_t i = i0; i < i1; ++i)
        for (int64_t k = k0; k < k1; ++k)
          e_max = std::max(e_max, sf_exponent(x.sf, i, k));
      const uint32_t e_out = e_max >= 6 ? e_max - 6 : 0;
      for (int64_t i = i0; i < i1; ++i)
        for (int64_t k = k0; k < k1; ++k) {
          const uint32_t e_in = sf_exponent(x.sf, i, k);
          if (e_in + 5 < e_out)
            fail(fn, fmt::format("input scale factors of output block [{}, "
                                 "{}] have biased exponents {} (at x.sf[{}, "
                                 "{}]) and {}; requires a max/min ratio of "
                                 "at most 2^11 (the original traps with a "
                                 "device assertion)",
                                 bi, bk, e_in, i, k, e_max));
          const float r = ref::bits_to_f32((e_in - e_out + 127) << 23);
          for (int64_t m = i * in.bm; m < std::min(M, (i + 1) * in.bm); ++m)
            for (int64_t j = k * in.bk; j < std::min(K, (k + 1) * in.bk); ++j) {
              const uint8_t byte = x.data.at<uint8_t>({m, j / 2});
              const float v =
                  ref::e2m1_to_f32(j % 2 == 0 ? byte & 0xF : byte >> 4);
              out.data.at<uint8_t>({m, j}) = ref::f32_to_e4m3(v * r);
            }
        }
      store_sf(
          out.sf, bi, bk,
          {ref::bits_to_f32(e_out << 23), 0.0f, static_cast<uint8_t>(e_out)});
    }
  }
  return out;
}

} // namespace tilejit::quant
