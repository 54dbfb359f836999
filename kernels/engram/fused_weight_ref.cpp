// fused_weight_ref.cpp - The Engram gate's fused weight wh * we (spec §2.2).
#include "common/convert.h"
#include "engram/reference.h"
#include "engram/validate.h"

namespace tilejit::engram {

HostTensor fused_weight_ref(const HostTensor &weight_hidden,
                            const HostTensor &weight_embed) {
  using namespace detail;
  constexpr std::string_view fn = "fused_weight_ref";
  check_dtype(fn, "weight_hidden", weight_hidden, DType::bf16);
  check_dtype(fn, "weight_embed", weight_embed, DType::bf16);
  check_rank(fn, "weight_hidden", weight_hidden, 2, "[hc, D]");
  const int64_t hc = weight_hidden.size(0), hidden = weight_hidden.size(1);
  check_shape(fn, "weight_embed", weight_embed, {hc, hidden}, "[hc, D]");
  check_hidden_multiple(fn, "weight_hidden", hidden, 256);
  check_contiguous(fn, "weight_hidden", weight_hidden);
  check_contiguous(fn, "weight_embed", weight_embed);

  HostTensor w = HostTensor::zeros(DType::f32, {hc, hidden});
  const uint16_t *wh = weight_hidden.data<uint16_t>();
  const uint16_t *we = weight_embed.data<uint16_t>();
  float *o = w.data<float>();
  // Two 8-bit significands multiply into at most 16 bits: exact in float32
  // unless the product leaves the float32 exponent range.
  for (int64_t i = 0; i < hc * hidden; ++i)
    o[i] = ref::bf16_to_f32(wh[i]) * ref::bf16_to_f32(we[i]);
  return w;
}

} // namespace tilejit::engram
