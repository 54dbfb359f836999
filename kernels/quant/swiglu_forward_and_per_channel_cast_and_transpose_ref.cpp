// swiglu_forward_and_per_channel_cast_and_transpose_ref.cpp - SwiGLU forward
// rounded to bf16, then a (bm, 1) e4m3 cast, optionally transposed (§11.3).
#include "quant/detail.h"

#include "common/convert.h"

#include <fmt/format.h>

namespace tilejit::quant {

using detail::fail;

QuantTensor swiglu_forward_and_per_channel_cast_and_transpose_ref(
    const HostTensor &x, std::string_view fmt, int64_t num_per_tokens,
    bool round_sf, bool without_transpose,
    std::optional<float> swiglu_clamp_value) {
  constexpr std::string_view fn =
      "swiglu_forward_and_per_channel_cast_and_transpose_ref";
  detail::parse_fmt(fn, fmt, {Fmt::e4m3});
  detail::check_rank(fn, "x", x, 2);
  detail::check_dtype(fn, "x", x, {DType::bf16});
  detail::check_contiguous(fn, "x", x);
  if (num_per_tokens != 32 && num_per_tokens != 128)
    fail(fn, fmt::format("argument 'num_per_tokens' is {}; requires 32 or 128",
                         num_per_tokens));
  const int64_t M = x.size(0), H = x.size(1) / 2;
  if (M % 128 != 0)
    fail(fn, fmt::format("argument 'x' has M = {} rows; requires "
                         "M % 128 == 0",
                         M));
  if (x.size(1) % 128 != 0)
    fail(fn, fmt::format("argument 'x' has 2H = {} columns; requires "
                         "2H % 128 == 0",
                         x.size(1)));
  const detail::Matrix in = detail::to_matrix(x);
  detail::Matrix a(M, H);
  for (int64_t r = 0; r < M; ++r)
    for (int64_t c = 0; c < H; ++c) {
      float g = in.at(r, c), u = in.at(r, H + c);
      // The clamp is done in float32 (the reference). The kernel clamps the
      // bf16 input against C, which agrees whenever C is exact in bf16.
      if (swiglu_clamp_value) {
        const float C = *swiglu_clamp_value;
        g = std::min(g, C);
        u = std::min(std::max(u, -C), C);
      }
      // Unlike §11.1, the activation is rounded to bf16 before the cast.
      a.at(r, c) = ref::bf16_to_f32(ref::f32_to_bf16(detail::swiglu(g, u)));
    }
  detail::QuantizeOptions o;
  o.fmt = Fmt::e4m3;
  o.block = {num_per_tokens, 1};
  o.round_sf = round_sf;
  QuantTensor q = detail::quantize(a, o);
  if (!without_transpose)
    q.data = detail::transpose_e4m3(q.data);
  return q;
}

} // namespace tilejit::quant
