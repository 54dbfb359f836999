// per_channel_cast_21_ref.cpp - TileKernels 2.1's per_channel_cast
// (tk21_ops §3.5): (bm, 1) e4m3 quantization for bm 32 or 128 of a plain
// (M, K) or of a per-token (1, bk_in) quantized one, with f32 row-major
// scales or 2.1's column-pack UE8M0 (§0.4(e)).
#include "quant/detail.h"

#include "common/convert.h"

#include <fmt/format.h>

namespace tilejit::quant {

using detail::ceil_div;
using detail::fail;

QuantTensor per_channel_cast_21_ref(const CastInput &x, std::string_view fmt,
                                    int64_t num_per_tokens, bool round_sf,
                                    std::optional<int64_t> num_per_channels,
                                    bool use_packed_ue8m0) {
  constexpr std::string_view fn = "per_channel_cast_21_ref";
  detail::parse_fmt(fn, fmt, {Fmt::e4m3});
  if (num_per_tokens != 32 && num_per_tokens != 128)
    fail(fn, fmt::format("argument 'num_per_tokens' is {}; requires 32 or "
                         "128",
                         num_per_tokens));
  if (use_packed_ue8m0 && !round_sf)
    fail(fn, "argument 'use_packed_ue8m0' is true; requires round_sf");
  detail::Matrix m(0, 0);
  if (const HostTensor *plain = std::get_if<HostTensor>(&x)) {
    m = detail::plain_per_channel_input(fn, *plain, num_per_channels);
  } else {
    const QuantTensor &q = std::get<QuantTensor>(x);
    detail::check_rank(fn, "x.data", q.data, 2);
    detail::check_dtype(fn, "x.data", q.data, {DType::e4m3});
    detail::check_contiguous(fn, "x.data", q.data);
    const int64_t bk = num_per_channels.value_or(0);
    if (bk != 32 && bk != 128)
      fail(fn,
           fmt::format("argument 'num_per_channels' is {} for a "
                       "QuantTensor x; requires 32 or 128",
                       num_per_channels ? fmt::format("{}", *num_per_channels)
                                        : std::string("None")));
    check_sf_input(fn, "x.sf", q.sf, q.data.size(0),
                   ceil_div(q.data.size(1), bk));
    m = detail::dequantize(q, {1, bk});
  }
  if (m.rows % 128 != 0 || m.cols % 128 != 0)
    fail(fn, fmt::format("argument 'x' has shape [{}, {}]; requires M and K "
                         "multiples of 128",
                         m.rows, m.cols));
  QuantTensor out = detail::quantize(
      m, detail::quantize_options(Fmt::e4m3, {num_per_tokens, 1}, round_sf));
  if (!use_packed_ue8m0)
    return out;
  // Column-pack: byte j of int32 (q, c) is the UE8M0 exponent of token
  // block 4q + j, column c; 0 past the last block.
  const int64_t blocks = out.sf.size(0), K = out.sf.size(1);
  HostTensor packed = HostTensor::zeros(DType::i32, {ceil_div(blocks, 4), K});
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t c = 0; c < K; ++c) {
      const uint32_t e = ref::f32_to_bits(out.sf.at<float>({b, c})) >> 23;
      uint32_t &word =
          reinterpret_cast<uint32_t &>(packed.at<int32_t>({b / 4, c}));
      word |= e << (8 * (b % 4));
    }
  out.sf = packed;
  return out;
}

} // namespace tilejit::quant
