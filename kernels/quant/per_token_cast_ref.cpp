// per_token_cast_ref.cpp - per_token_cast and its sf-only and precomputed-sf
// variants (§4): row-wise (1, bk) quantization to e4m3 or packed fp4, from
// bf16/f32 or by re-quantizing a QuantTensor; 'e5m6' dispatches to §5.
#include "quant/detail.h"

#include <fmt/format.h>

namespace tilejit::quant {

using detail::fail;

namespace {

enum class Variant { full, sf_only, precomputed_sf };

/// The checks of §4.1 shared by the three entry points; returns the input
/// as a float32 matrix (dequantized for a QuantTensor).
detail::Matrix check_and_load(std::string_view fn, Variant variant,
                              const CastInput &x, Fmt f, int64_t bk,
                              std::optional<BlockSize> x_block_size,
                              bool col_major, bool round_sf, bool packed) {
  detail::check_layout_flags(fn, col_major, round_sf, packed);
  detail::Matrix m = detail::cast_input_matrix(fn, x, x_block_size);
  const int64_t K = m.cols;
  const bool quantized = std::holds_alternative<QuantTensor>(x);
  const bool valid_bk =
      bk == 16 || bk == 32 || bk == 64 || bk == 128 || (bk == K && K % 64 == 0);
  if (!valid_bk)
    fail(fn, fmt::format("argument 'num_per_channels' is {}; requires 16, 32, "
                         "64, 128, or K when K % 64 == 0",
                         bk));
  if (bk == K && (quantized || variant != Variant::full))
    fail(fn, fmt::format("argument 'num_per_channels' equals K = {} (one "
                         "group per row); that mode requires a plain tensor "
                         "x and the full per_token_cast",
                         K));
  if (quantized && variant != Variant::full)
    fail(fn, "argument 'x' is a QuantTensor; this variant requires a plain "
             "bf16 or f32 tensor");
  if (quantized && x_block_size->bk % bk != 0 && bk % x_block_size->bk != 0)
    fail(fn, fmt::format("argument 'x_block_size' is ({}, {}); its bk must "
                         "divide or be a multiple of num_per_channels = {}",
                         x_block_size->bm, x_block_size->bk, bk));
  if (f == Fmt::e2m1 && K % 2 != 0)
    fail(fn, fmt::format("x has K = {} columns; 'e2m1' requires an even K", K));
  return m;
}

detail::QuantizeOptions options(Fmt f, int64_t bk, bool col_major,
                                bool round_sf, bool packed) {
  return detail::quantize_options(f, {1, bk}, round_sf, col_major, packed);
}

} // namespace

QuantTensor per_token_cast_ref(const CastInput &x, std::string_view fmt,
                               int64_t num_per_channels,
                               std::optional<BlockSize> x_block_size,
                               bool use_tma_aligned_col_major_sf, bool round_sf,
                               bool use_packed_ue8m0, bool use_e4m3_sf,
                               bool stochastic_cast) {
  constexpr std::string_view fn = "per_token_cast_ref";
  const Fmt f = detail::parse_fmt(fn, fmt, {Fmt::e4m3, Fmt::e2m1, Fmt::e5m6});
  if (stochastic_cast && f == Fmt::e5m6)
    fail(fn, "argument 'stochastic_cast' is true with fmt 'e5m6'; requires "
             "fmt e4m3 or e2m1");
  if (use_e4m3_sf && (round_sf || use_packed_ue8m0 || f == Fmt::e5m6))
    fail(fn, fmt::format("argument 'use_e4m3_sf' is true with round_sf={}, "
                         "use_packed_ue8m0={} and fmt '{}'; requires "
                         "round_sf and use_packed_ue8m0 false and fmt e4m3 "
                         "or e2m1 (tk21 0.4)",
                         round_sf, use_packed_ue8m0, fmt));
  if (f == Fmt::e5m6) {
    if (!std::holds_alternative<HostTensor>(x) || x_block_size)
      fail(fn, "fmt 'e5m6' requires a plain bf16 or f32 tensor x and "
               "x_block_size None");
    return per_token_cast_to_e5m6_ref(std::get<HostTensor>(x), num_per_channels,
                                      use_tma_aligned_col_major_sf, round_sf,
                                      use_packed_ue8m0);
  }
  const detail::Matrix m =
      check_and_load(fn, Variant::full, x, f, num_per_channels, x_block_size,
                     use_tma_aligned_col_major_sf, round_sf, use_packed_ue8m0);
  // Re-quantization uses the reference's order (data * sf_in) * sf_inv: m
  // holds data * sf_in. The kernel's data * (sf_in * sf_inv) agrees whenever
  // both scales are powers of two (§4.3).
  detail::QuantizeOptions o =
      options(f, num_per_channels, use_tma_aligned_col_major_sf, round_sf,
              use_packed_ue8m0);
  o.e4m3_sf = use_e4m3_sf;
  if (stochastic_cast && (m.cols % 4 != 0 || num_per_channels % 4 != 0))
    fail(fn, fmt::format("argument 'stochastic_cast' is true with K = {} and "
                         "num_per_channels = {}; requires both multiples of 4 "
                         "(quads)",
                         m.cols, num_per_channels));
  o.stochastic = stochastic_cast;
  return detail::quantize(m, o);
}

HostTensor per_token_cast_with_sf_only_ref(
    const CastInput &x, std::string_view fmt, int64_t num_per_channels,
    std::optional<BlockSize> x_block_size, bool use_tma_aligned_col_major_sf,
    bool round_sf, bool use_packed_ue8m0) {
  constexpr std::string_view fn = "per_token_cast_with_sf_only_ref";
  const Fmt f = detail::parse_fmt(fn, fmt, {Fmt::e4m3, Fmt::e2m1});
  const detail::Matrix m =
      check_and_load(fn, Variant::sf_only, x, f, num_per_channels, x_block_size,
                     use_tma_aligned_col_major_sf, round_sf, use_packed_ue8m0);
  return detail::quantize(m, options(f, num_per_channels,
                                     use_tma_aligned_col_major_sf, round_sf,
                                     use_packed_ue8m0))
      .sf;
}

HostTensor per_token_cast_with_precomputed_sf_ref(
    const CastInput &x, std::string_view fmt, int64_t num_per_channels,
    const HostTensor &sf, std::optional<BlockSize> x_block_size,
    bool use_tma_aligned_col_major_sf, bool round_sf, bool use_packed_ue8m0) {
  constexpr std::string_view fn = "per_token_cast_with_precomputed_sf_ref";
  const Fmt f = detail::parse_fmt(fn, fmt, {Fmt::e4m3, Fmt::e2m1});
  const detail::Matrix m = check_and_load(
      fn, Variant::precomputed_sf, x, f, num_per_channels, x_block_size,
      use_tma_aligned_col_major_sf, round_sf, use_packed_ue8m0);
  if (use_tma_aligned_col_major_sf || use_packed_ue8m0)
    fail(fn, "a precomputed 'sf' requires use_tma_aligned_col_major_sf and "
             "use_packed_ue8m0 to be false");
  detail::check_rank(fn, "sf", sf, 2);
  // f32, or 2.1's E4M3 scales (decoded, then sf_inv = 1 / sf).
  detail::check_dtype(fn, "sf", sf, {DType::f32, DType::e4m3});
  detail::check_last_dim_contiguous(fn, "sf", sf);
  detail::check_shape(fn, "sf", sf,
                      {m.rows, detail::ceil_div(m.cols, num_per_channels)});
  detail::QuantizeOptions o =
      options(f, num_per_channels, false, round_sf, false);
  o.precomputed_sf = &sf;
  return detail::quantize(m, o).data;
}

} // namespace tilejit::quant
