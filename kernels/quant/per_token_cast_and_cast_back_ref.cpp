// per_token_cast_and_cast_back_ref.cpp - TileKernels 2.1's
// per_token_cast_and_cast_back (tk21_ops §3.3): quantize per token, then
// dequantize back to x's dtype, as one reference.
#include "quant/detail.h"

#include <fmt/format.h>

namespace tilejit::quant {

HostTensor per_token_cast_and_cast_back_ref(const HostTensor &x,
                                            std::string_view fmt,
                                            int64_t num_per_channels,
                                            bool round_sf, bool use_e4m3_sf) {
  constexpr std::string_view fn = "per_token_cast_and_cast_back_ref";
  detail::parse_fmt(fn, fmt, {Fmt::e4m3, Fmt::e2m1});
  detail::check_rank(fn, "x", x, 2);
  detail::check_dtype(fn, "x", x, {DType::bf16, DType::f32});
  const int64_t g = num_per_channels, K = x.size(1);
  if (g != 16 && g != 32 && g != 64 && g != 128)
    detail::fail(fn, fmt::format("argument 'num_per_channels' is {}; "
                                 "requires 16, 32, 64 or 128",
                                 g));
  if (K % g != 0)
    detail::fail(fn, fmt::format("argument 'x' has K = {}; requires K % "
                                 "num_per_channels == 0 (num_per_channels = "
                                 "{})",
                                 K, g));
  if (K % 64 != 0)
    detail::fail(fn, fmt::format("argument 'x' has K = {}; requires K % 64 "
                                 "== 0",
                                 K));
  if (round_sf && use_e4m3_sf)
    detail::fail(fn, "arguments 'round_sf' and 'use_e4m3_sf' are both true; "
                     "requires at most one");
  const QuantTensor q = per_token_cast_ref(x, fmt, g, std::nullopt, false,
                                           round_sf, false, use_e4m3_sf);
  return per_token_cast_back_ref(q, x.dtype() == DType::bf16 ? "bf16" : "fp32",
                                 g);
}

} // namespace tilejit::quant
