// per_channel_cast_ref.cpp - per_channel_cast and per_channel_cast_fused
// (§10.1, §10.2): (128, 1) e4m3 quantization, optionally of gathered rows
// and of a per-token (1, 128) quantized input.
#include "quant/detail.h"

#include <fmt/format.h>

namespace tilejit::quant {

using detail::fail;

namespace detail {

Matrix plain_per_channel_input(std::string_view fn, const HostTensor &x,
                               std::optional<int64_t> num_per_channels) {
  check_rank(fn, "x", x, 2);
  check_dtype(fn, "x", x, {DType::bf16, DType::f32});
  check_contiguous(fn, "x", x);
  // num_per_channels describes the input quantization; for a plain x we
  // require None rather than silently ignore it.
  if (num_per_channels)
    fail(fn, fmt::format("argument 'num_per_channels' is {} for a plain "
                         "tensor x; requires None",
                         *num_per_channels));
  return to_matrix(x);
}

} // namespace detail

namespace {

detail::QuantizeOptions per_channel_options(bool round_sf) {
  return detail::quantize_options(Fmt::e4m3, {128, 1}, round_sf);
}

/// The fused op's input as float32 (N, K), dequantized when quantized.
detail::Matrix load_fused_input(std::string_view fn, const CastInput &x,
                                std::optional<int64_t> num_per_channels) {
  if (const HostTensor *plain = std::get_if<HostTensor>(&x))
    return detail::plain_per_channel_input(fn, *plain, num_per_channels);
  const QuantTensor &q = std::get<QuantTensor>(x);
  detail::check_rank(fn, "x.data", q.data, 2);
  detail::check_dtype(fn, "x.data", q.data, {DType::e4m3});
  detail::check_contiguous(fn, "x.data", q.data);
  if (num_per_channels != 128)
    fail(fn, fmt::format("argument 'num_per_channels' is {} for a "
                         "QuantTensor x; requires 128",
                         num_per_channels ? fmt::format("{}", *num_per_channels)
                                          : std::string("None")));
  const int64_t N = q.data.size(0), K = q.data.size(1);
  if (K % 128 != 0)
    fail(fn, fmt::format("argument 'x.data' has K = {} columns; a QuantTensor "
                         "x requires K % 128 == 0",
                         K));
  // A contiguous (N, 1) SF (K == 128) is accepted: the original misreads it
  // as column-major and fails its shape check, but both readings address
  // the same memory.
  detail::check_rank(fn, "x.sf", q.sf, 2);
  detail::check_dtype(fn, "x.sf", q.sf, {DType::f32});
  detail::check_contiguous(fn, "x.sf", q.sf);
  detail::check_shape(fn, "x.sf", q.sf, {N, K / 128});
  return detail::dequantize(q, {1, 128});
}

} // namespace

QuantTensor per_channel_cast_ref(const HostTensor &x, std::string_view fmt,
                                 int64_t num_per_tokens, bool round_sf) {
  constexpr std::string_view fn = "per_channel_cast_ref";
  detail::parse_fmt(fn, fmt, {Fmt::e4m3});
  detail::check_rank(fn, "x", x, 2);
  detail::check_dtype(fn, "x", x, {DType::bf16, DType::f32});
  detail::check_contiguous(fn, "x", x);
  if (num_per_tokens != 128)
    fail(fn, fmt::format("argument 'num_per_tokens' is {}; requires 128",
                         num_per_tokens));
  detail::check_per_channel_shape(fn, x);
  return detail::quantize(detail::to_matrix(x), per_channel_options(round_sf));
}

QuantTensor
per_channel_cast_fused_ref(const CastInput &x, std::string_view fmt,
                           int64_t num_per_tokens, bool round_sf,
                           std::optional<int64_t> num_per_channels,
                           const std::optional<HostTensor> &pos_to_token) {
  constexpr std::string_view fn = "per_channel_cast_fused_ref";
  detail::parse_fmt(fn, fmt, {Fmt::e4m3});
  if (num_per_tokens != 128)
    fail(fn, fmt::format("argument 'num_per_tokens' is {}; requires 128",
                         num_per_tokens));
  const detail::Matrix in = load_fused_input(fn, x, num_per_channels);
  if (!pos_to_token) {
    if (in.rows % 128 != 0)
      fail(fn, fmt::format("x has {} rows; without pos_to_token requires a "
                           "multiple of 128",
                           in.rows));
    return detail::quantize(in, per_channel_options(round_sf));
  }
  const HostTensor &p = *pos_to_token;
  detail::check_rank(fn, "pos_to_token", p, 1);
  detail::check_dtype(fn, "pos_to_token", p, {DType::i32});
  detail::check_contiguous(fn, "pos_to_token", p);
  const int64_t R = p.size(0);
  if (R % 16 != 0)
    fail(fn, fmt::format("argument 'pos_to_token' has {} entries; requires a "
                         "multiple of 16",
                         R));
  // Gathered rows; entries < 0 give zero rows that take part in the amax as
  // zeros. A partial last 128-row block (R % 128 != 0, untested in the
  // original) takes its amax over the rows that exist.
  detail::Matrix v(R, in.cols);
  for (int64_t r = 0; r < R; ++r) {
    const int32_t src = p.at<int32_t>({r});
    if (src >= in.rows)
      fail(fn, fmt::format("pos_to_token[{}] is {}; requires a negative "
                           "value (padding) or a row of x (< {})",
                           r, src, in.rows));
    if (src >= 0)
      for (int64_t c = 0; c < in.cols; ++c)
        v.at(r, c) = in.at(src, c);
  }
  return detail::quantize(v, per_channel_options(round_sf));
}

} // namespace tilejit::quant
