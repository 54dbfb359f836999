// cast_back_ref.cpp - cast_back and per_token_cast_back (§6, §7):
// dequantization of e4m3, packed fp4 or E5M6 data to bf16 or float32.
#include "quant/detail.h"

#include "common/convert.h"

#include <fmt/format.h>

namespace tilejit::quant {

using detail::ceil_div;
using detail::fail;

namespace {

/// The E5M6 values of a u8 (M, 3K/2) tensor as a float32 (M, K) matrix.
detail::Matrix decode_e5m6(const HostTensor &data) {
  const int64_t M = data.size(0), K = logical_cols(data);
  detail::Matrix m(M, K);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j0 = 0; j0 < K; j0 += 8) {
      uint32_t words[3] = {0, 0, 0};
      for (int64_t w = 0; w < 3; ++w)
        for (int64_t b = 0; b < 4; ++b)
          words[w] |= uint32_t{data.at<uint8_t>({i, j0 / 8 * 12 + w * 4 + b})}
                      << (8 * b);
      uint16_t codes[8];
      ref::unpack_e5m6(words, codes);
      for (int64_t c = 0; c < 8; ++c)
        m.at(i, j0 + c) = ref::e5m6_to_f32(codes[c]);
    }
  return m;
}

} // namespace

HostTensor cast_back_ref(const QuantTensor &x, std::string_view fmt,
                         BlockSize x_block_size,
                         std::optional<std::string_view> x_special_fmt) {
  constexpr std::string_view fn = "cast_back_ref";
  if (fmt != "bf16" && fmt != "fp32")
    fail(fn,
         fmt::format("argument 'fmt' is '{}'; requires 'bf16' or 'fp32'", fmt));
  if (x_special_fmt && *x_special_fmt != "e5m6")
    fail(fn, fmt::format("argument 'x_special_fmt' is '{}'; requires None or "
                         "'e5m6'",
                         *x_special_fmt));
  detail::check_block_size(fn, "x_block_size", x_block_size);
  detail::check_rank(fn, "x.data", x.data, 2);
  detail::check_contiguous(fn, "x.data", x.data);
  const bool e5m6 = x_special_fmt.has_value();
  if (e5m6) {
    detail::check_dtype(fn, "x.data", x.data, {DType::u8});
    if (x.data.size(1) % 12 != 0)
      fail(fn, fmt::format("x.data has {} byte columns; 'e5m6' requires a "
                           "multiple of 12 (K = columns * 2 / 3 with "
                           "K % 8 == 0)",
                           x.data.size(1)));
  } else {
    detail::check_dtype(fn, "x.data", x.data, {DType::e4m3, DType::i8});
    if (logical_cols(x.data) % 64 != 0)
      fail(fn, fmt::format("x.data has logical K = {}; requires K % 64 == 0",
                           logical_cols(x.data)));
  }
  const int64_t M = x.data.size(0), K = logical_cols(x.data);
  check_sf_input(fn, "x.sf", x.sf, ceil_div(M, x_block_size.bm),
                 ceil_div(K, x_block_size.bk));
  detail::Matrix m(0, 0);
  if (e5m6) {
    m = decode_e5m6(x.data);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < K; ++j)
        m.at(i, j) *= read_sf(x.sf, i / x_block_size.bm, j / x_block_size.bk);
  } else {
    m = detail::dequantize(x, x_block_size);
  }
  if (fmt == "fp32")
    return detail::to_tensor(m);
  HostTensor out = HostTensor::zeros(DType::bf16, {M, K});
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < K; ++j)
      out.at<uint16_t>({i, j}) = ref::f32_to_bf16(m.at(i, j));
  return out;
}

HostTensor
per_token_cast_back_ref(const QuantTensor &x, std::string_view fmt,
                        int64_t num_per_channels,
                        std::optional<std::string_view> x_special_fmt) {
  if (num_per_channels <= 0)
    fail("per_token_cast_back_ref",
         fmt::format("argument 'num_per_channels' is {}; requires a positive "
                     "group size",
                     num_per_channels));
  return cast_back_ref(x, fmt, {1, num_per_channels}, x_special_fmt);
}

} // namespace tilejit::quant
