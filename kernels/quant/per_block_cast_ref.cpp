// per_block_cast_ref.cpp - per_block_cast and its sf-only and precomputed-sf
// variants (§8): (bm, bk) block quantization of a contiguous bf16/f32.
#include "quant/detail.h"

#include <fmt/format.h>

namespace tilejit::quant {

using detail::fail;

namespace {

/// The checks of §8.1; returns the input as float32.
detail::Matrix check_and_load(std::string_view fn, const HostTensor &x,
                              BlockSize block, bool col_major, bool round_sf,
                              bool packed) {
  detail::check_rank(fn, "x", x, 2);
  detail::check_dtype(fn, "x", x, {DType::bf16, DType::f32});
  detail::check_contiguous(fn, "x", x);
  auto allowed = [](int64_t b) { return b == 32 || b == 128; };
  if (!allowed(block.bm) || !allowed(block.bk))
    fail(fn, fmt::format("argument 'block_size' is ({}, {}); requires bm and "
                         "bk in {{32, 128}}",
                         block.bm, block.bk));
  if (x.size(1) % 64 != 0)
    fail(fn, fmt::format("argument 'x' has K = {} columns; requires "
                         "K % 64 == 0",
                         x.size(1)));
  detail::check_layout_flags(fn, col_major, round_sf, packed);
  return detail::to_matrix(x);
}

detail::QuantizeOptions options(Fmt f, BlockSize block, bool col_major,
                                bool round_sf, bool packed) {
  return detail::quantize_options(f, block, round_sf, col_major, packed);
}

} // namespace

QuantTensor per_block_cast_ref(const HostTensor &x, std::string_view fmt,
                               BlockSize block_size,
                               bool use_tma_aligned_col_major_sf, bool round_sf,
                               bool use_packed_ue8m0) {
  constexpr std::string_view fn = "per_block_cast_ref";
  const Fmt f = detail::parse_fmt(fn, fmt, {Fmt::e4m3, Fmt::e2m1});
  const detail::Matrix m =
      check_and_load(fn, x, block_size, use_tma_aligned_col_major_sf, round_sf,
                     use_packed_ue8m0);
  return detail::quantize(m,
                          options(f, block_size, use_tma_aligned_col_major_sf,
                                  round_sf, use_packed_ue8m0));
}

HostTensor per_block_cast_with_sf_only_ref(
    const HostTensor &x, std::string_view fmt, BlockSize block_size,
    bool use_tma_aligned_col_major_sf, bool round_sf, bool use_packed_ue8m0) {
  constexpr std::string_view fn = "per_block_cast_with_sf_only_ref";
  const Fmt f = detail::parse_fmt(fn, fmt, {Fmt::e4m3, Fmt::e2m1});
  const detail::Matrix m =
      check_and_load(fn, x, block_size, use_tma_aligned_col_major_sf, round_sf,
                     use_packed_ue8m0);
  return detail::quantize(m,
                          options(f, block_size, use_tma_aligned_col_major_sf,
                                  round_sf, use_packed_ue8m0))
      .sf;
}

HostTensor per_block_cast_with_precomputed_sf_ref(
    const HostTensor &x, std::string_view fmt, BlockSize block_size,
    const HostTensor &sf, bool use_tma_aligned_col_major_sf, bool round_sf,
    bool use_packed_ue8m0) {
  constexpr std::string_view fn = "per_block_cast_with_precomputed_sf_ref";
  const Fmt f = detail::parse_fmt(fn, fmt, {Fmt::e4m3, Fmt::e2m1});
  const detail::Matrix m =
      check_and_load(fn, x, block_size, use_tma_aligned_col_major_sf, round_sf,
                     use_packed_ue8m0);
  if (use_tma_aligned_col_major_sf || use_packed_ue8m0)
    fail(fn, "a precomputed 'sf' requires use_tma_aligned_col_major_sf and "
             "use_packed_ue8m0 to be false");
  detail::check_rank(fn, "sf", sf, 2);
  detail::check_dtype(fn, "sf", sf, {DType::f32});
  detail::check_last_dim_contiguous(fn, "sf", sf);
  detail::check_shape(fn, "sf", sf,
                      {detail::ceil_div(m.rows, block_size.bm),
                       detail::ceil_div(m.cols, block_size.bk)});
  detail::QuantizeOptions o = options(f, block_size, false, round_sf, false);
  o.precomputed_sf = &sf;
  return detail::quantize(m, o).data;
}

} // namespace tilejit::quant
