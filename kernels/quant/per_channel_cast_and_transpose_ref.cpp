// per_channel_cast_and_transpose_ref.cpp - per_channel_cast_and_transpose
// (§10.3): (bm, 1) e4m3 quantization of a bf16 (M, K), data returned (K, M).
#include "quant/detail.h"

#include <fmt/format.h>

namespace tilejit::quant {

using detail::fail;

namespace detail {

HostTensor transpose_e4m3(const HostTensor &q) {
  const int64_t M = q.size(0), K = q.size(1);
  HostTensor t = HostTensor::zeros(DType::e4m3, {K, M});
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < K; ++j)
      t.at<uint8_t>({j, i}) = q.at<uint8_t>({i, j});
  return t;
}

} // namespace detail

QuantTensor per_channel_cast_and_transpose_ref(const HostTensor &x,
                                               std::string_view fmt,
                                               int64_t num_per_tokens,
                                               bool round_sf) {
  constexpr std::string_view fn = "per_channel_cast_and_transpose_ref";
  detail::parse_fmt(fn, fmt, {Fmt::e4m3});
  detail::check_rank(fn, "x", x, 2);
  detail::check_dtype(fn, "x", x, {DType::bf16});
  detail::check_contiguous(fn, "x", x);
  if (num_per_tokens != 32 && num_per_tokens != 128)
    fail(fn, fmt::format("argument 'num_per_tokens' is {}; requires 32 or 128",
                         num_per_tokens));
  detail::check_per_channel_shape(fn, x);
  QuantTensor q = detail::quantize(
      detail::to_matrix(x),
      detail::quantize_options(Fmt::e4m3, {num_per_tokens, 1}, round_sf));
  q.data = detail::transpose_e4m3(q.data);
  return q;
}

} // namespace tilejit::quant
