// per_token_cast_to_e5m6_ref.cpp - per_token_cast(x, 'e5m6', K) (§5): one
// scale per row, E5M6 codes packed 8 per 3 little-endian uint32 words.
#include "quant/detail.h"

#include "common/convert.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace tilejit::quant {

QuantTensor per_token_cast_to_e5m6_ref(const HostTensor &x,
                                       int64_t num_per_channels,
                                       bool use_tma_aligned_col_major_sf,
                                       bool round_sf, bool use_packed_ue8m0) {
  constexpr std::string_view fn = "per_token_cast_to_e5m6_ref";
  detail::check_rank(fn, "x", x, 2);
  detail::check_dtype(fn, "x", x, {DType::bf16, DType::f32});
  detail::check_last_dim_contiguous(fn, "x", x);
  detail::check_layout_flags(fn, use_tma_aligned_col_major_sf, round_sf,
                             use_packed_ue8m0);
  const int64_t M = x.size(0), K = x.size(1);
  if (num_per_channels != K)
    detail::fail(fn, fmt::format("argument 'num_per_channels' is {}; requires "
                                 "K = {} (one scale per row)",
                                 num_per_channels, K));
  if (K % 8 != 0)
    detail::fail(fn,
                 fmt::format("x has K = {} columns; requires K % 8 == 0", K));
  const detail::Matrix m = detail::to_matrix(x);
  QuantTensor out;
  out.data = HostTensor::zeros(DType::u8, {M, K * 3 / 2});
  out.sf = alloc_sf(
      M, 1, sf_layout_of(use_tma_aligned_col_major_sf, use_packed_ue8m0));
  for (int64_t i = 0; i < M; ++i) {
    float amax = 0.0f;
    for (int64_t j = 0; j < K; ++j)
      amax = std::max(amax, std::fabs(m.at(i, j)));
    const SfAndInv s = get_sf_and_inv(amax, Fmt::e5m6, round_sf);
    store_sf(out.sf, i, 0, s);
    for (int64_t j0 = 0; j0 < K; j0 += 8) {
      uint16_t codes[8];
      for (int64_t c = 0; c < 8; ++c)
        codes[c] = ref::f32_to_e5m6(m.at(i, j0 + c) * s.sf_inv);
      uint32_t words[3];
      ref::pack_e5m6(codes, words);
      for (int64_t w = 0; w < 3; ++w) // little-endian bytes of each word
        for (int64_t b = 0; b < 4; ++b)
          out.data.at<uint8_t>({i, j0 / 8 * 12 + w * 4 + b}) =
              static_cast<uint8_t>(words[w] >> (8 * b));
    }
  }
  return out;
}

} // namespace tilejit::quant
