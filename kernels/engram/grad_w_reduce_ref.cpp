// grad_w_reduce_ref.cpp - Sums the per-block partial gradients of the fused
// Engram weight and accumulates the gradients of its two factors (spec §2.5).
#include "common/convert.h"
#include "engram/reference.h"
#include "engram/validate.h"

#include <utility>
#include <vector>

namespace tilejit::engram {

void grad_w_reduce_ref(const HostTensor &grad_w_partial,
                       const HostTensor &weight_hidden,
                       const HostTensor &weight_embed,
                       const HostTensor &grad_weight_hidden,
                       const HostTensor &grad_weight_embed) {
  using namespace detail;
  constexpr std::string_view fn = "grad_w_reduce_ref";
  check_dtype(fn, "grad_w_partial", grad_w_partial, DType::f32);
  check_rank(fn, "grad_w_partial", grad_w_partial, 3, "[B, hc, D]");
  const int64_t blocks = grad_w_partial.size(0), hc = grad_w_partial.size(1),
                hidden = grad_w_partial.size(2);
  // The original loads the partial rows in 4 pipelined batches.
  if (blocks % 4 != 0)
    throw UserError(fmt::format("{}: argument 'grad_w_partial' has B = {} "
                                "rows; requires B % 4 == 0",
                                fn, blocks));
  check_hidden_multiple(fn, "grad_w_partial", hidden, 512);
  check_contiguous(fn, "grad_w_partial", grad_w_partial);
  const std::pair<std::string_view, const HostTensor *> weights[] = {
      {"weight_hidden", &weight_hidden}, {"weight_embed", &weight_embed}};
  for (auto [name, t] : weights) {
    check_dtype(fn, name, *t, DType::bf16);
    check_shape(fn, name, *t, {hc, hidden}, "[hc, D]");
    check_contiguous(fn, name, *t);
  }
  const std::pair<std::string_view, const HostTensor *> grads[] = {
      {"grad_weight_hidden", &grad_weight_hidden},
      {"grad_weight_embed", &grad_weight_embed}};
  for (auto [name, t] : grads) {
    check_dtype(fn, name, *t, DType::f32);
    check_shape(fn, name, *t, {hc, hidden}, "[hc, D]");
    check_contiguous(fn, name, *t);
  }

  const int64_t n = hc * hidden;
  std::vector<double> gw(n, 0.0);
  const float *partial = grad_w_partial.data<float>();
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t i = 0; i < n; ++i)
      gw[i] += partial[b * n + i];
  const uint16_t *wh = weight_hidden.data<uint16_t>();
  const uint16_t *we = weight_embed.data<uint16_t>();
  float *gwh = grad_weight_hidden.data<float>();
  float *gwe = grad_weight_embed.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    gwh[i] = static_cast<float>(gwh[i] + gw[i] * ref::bf16_to_f32(we[i]));
    gwe[i] = static_cast<float>(gwe[i] + gw[i] * ref::bf16_to_f32(wh[i]));
  }
}

} // namespace tilejit::engram
