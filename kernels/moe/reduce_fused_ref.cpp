// reduce_fused_ref.cpp - CPU reference of reduce_fused (spec §1.8): the
// weighted sum of each token's fused rows, as one FMA chain in slot order.
#include "moe/check.h"
#include "moe/reference.h"

#include "common/convert.h"

#include <cmath>

namespace tilejit::moe {

namespace {

constexpr std::string_view fn = "reduce_fused_ref";

float load(const HostTensor &x, int64_t offset) {
  return x.dtype() == DType::f32 ? x.data<float>()[offset]
                                 : ref::bf16_to_f32(x.data<uint16_t>()[offset]);
}

void store(HostTensor &out, int64_t offset, float y) {
  switch (out.dtype()) {
  case DType::f32:
    out.data<float>()[offset] = y;
    break;
  case DType::bf16:
    out.data<uint16_t>()[offset] = ref::f32_to_bf16(y);
    break;
  default:
    // The original stores with __NV_SATFINITE; the torch reference's cast
    // would give NaN above 448 (spec §7.8). We saturate, like the kernel.
    out.data<uint8_t>()[offset] = ref::f32_to_e4m3(y);
    break;
  }
}

} // namespace

HostTensor reduce_fused_ref(
    const std::variant<HostTensor, std::pair<HostTensor, HostTensor>> &x_arg,
    const std::optional<HostTensor> &topk_weights,
    const HostTensor &token_topk_to_pos, std::string_view fp8_format,
    const std::optional<HostTensor> &sf, const std::optional<HostTensor> &out) {
  const bool with_x_sf =
      std::holds_alternative<std::pair<HostTensor, HostTensor>>(x_arg);
  const HostTensor &x =
      with_x_sf ? std::get<1>(x_arg).first : std::get<0>(x_arg);
  if (x.dtype() != DType::f32 && x.dtype() != DType::bf16)
    detail::fail(fn, "argument 'x' has dtype {}; requires f32 or bf16",
                 name_of(x.dtype()));
  detail::check_rank(fn, "x", x, 2);
  detail::check_contiguous(fn, "x", x);
  const int64_t positions = x.size(0), hidden = x.size(1);
  if (hidden % 256 != 0)
    detail::fail(fn,
                 "argument 'x' has shape [{}, {}]; requires a hidden size "
                 "that is a multiple of 256",
                 positions, hidden);
  const float *x_sf = nullptr;
  if (with_x_sf) {
    const HostTensor &s = std::get<1>(x_arg).second;
    detail::check_tensor(fn, "x_sf", s, DType::f32, 1);
    detail::check_shape(fn, "x_sf", s, {positions}, "(N, the rows of 'x')");
    x_sf = s.data<float>();
  }
  detail::check_tensor(fn, "token_topk_to_pos", token_topk_to_pos, DType::i32,
                       2);
  const int64_t tokens = token_topk_to_pos.size(0),
                topk = token_topk_to_pos.size(1);
  if (topk_weights) {
    detail::check_tensor(fn, "topk_weights", *topk_weights, DType::f32, 2);
    detail::check_shape(fn, "topk_weights", *topk_weights, {tokens, topk},
                        "(T, K, the shape of 'token_topk_to_pos')");
  }
  DType out_dtype = x.dtype();
  if (fp8_format == "e4m3")
    out_dtype = DType::e4m3;
  else if (!fp8_format.empty())
    detail::fail(fn, "argument 'fp8_format' is '{}'; requires '' or 'e4m3'",
                 fp8_format);
  if (sf) {
    if (fp8_format.empty())
      detail::fail(fn, "argument 'sf' is given with fp8_format ''; requires "
                       "fp8_format 'e4m3' (only FP8 output takes sf)");
    detail::check_tensor(fn, "sf", *sf, DType::f32, 1);
    detail::check_shape(fn, "sf", *sf, {1}, "(one scale)");
  }
  HostTensor result;
  if (out) {
    detail::check_dtype(fn, "out", *out, out_dtype);
    detail::check_rank(fn, "out", *out, 2);
    detail::check_shape(fn, "out", *out, {tokens, hidden}, "(T, H)");
    detail::check_contiguous(fn, "out", *out);
    result = *out;
  } else {
    result = HostTensor::zeros(out_dtype, {tokens, hidden});
  }
  const int32_t *pos = token_topk_to_pos.data<int32_t>();
  for (int64_t i = 0; i < tokens * topk; ++i)
    if (pos[i] >= positions)
      detail::fail(fn,
                   "argument 'token_topk_to_pos' holds {} at [{}, {}]; "
                   "requires a negative value (unused) or a row of 'x' below "
                   "{}",
                   pos[i], i / topk, i % topk, positions);

  const float *weights = topk_weights ? topk_weights->data<float>() : nullptr;
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t i = 0; i < hidden; ++i) {
      float acc = 0.0f;
      for (int64_t k = 0; k < topk; ++k) {
        const int64_t p = pos[t * topk + k];
        if (p < 0)
          continue;
        float s = weights ? weights[t * topk + k] : 1.0f;
        if (x_sf)
          s = s * x_sf[p];
        acc = std::fma(load(x, p * hidden + i), s, acc);
      }
      const float y = sf ? acc * sf->data<float>()[0] : acc;
      store(result, t * hidden + i, y);
    }
  return result;
}

} // namespace tilejit::moe
