// engram_gate_ref.cpp - The Engram gate layer (EngramGateFn, spec §2.6):
// forward and backward composed of the Engram op references.
#include "modeling/engram_gate_reference.h"

#include "engram/reference.h"
#include "tilejit/error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string_view>
#include <vector>

namespace tilejit::modeling {

namespace {

constexpr std::string_view kFwd = "engram_gate_ref";
constexpr std::string_view kBwd = "engram_gate_backward_ref";

/// `t` with its leading dims (all but the last `tail_rank`) merged into one:
/// a view of t's memory (valid while t lives) when they can be merged, else
/// a contiguous copy, as torch.reshape does.
HostTensor flatten_leading(const HostTensor &t, int tail_rank) {
  const int lead = t.rank() - tail_rank;
  int64_t rows = 1;
  for (int i = 0; i < lead; ++i)
    rows *= t.size(i);
  std::vector<int64_t> shape{rows}, strides{0};
  for (int i = lead; i < t.rank(); ++i) {
    shape.push_back(t.size(i));
    strides.push_back(t.stride(i));
  }
  bool mergeable = true;
  int64_t expected = -1; // stride the next outer dim needs to merge
  for (int i = lead; i-- > 0;) {
    if (t.size(i) == 1)
      continue;
    if (expected < 0)
      strides[0] = t.stride(i);
    else
      mergeable = mergeable && t.stride(i) == expected;
    expected = t.stride(i) * t.size(i);
  }
  if (mergeable)
    return HostTensor::view(t.raw(), t.dtype(), shape, strides);
  return t.clone().reinterpret(t.dtype(), shape);
}

/// hidden_states, k [*, hc, D] of one shape; v [*, D].
void check_layer_shapes(std::string_view fn, const HostTensor &x,
                        const HostTensor &k, const HostTensor &v) {
  if (x.rank() < 2)
    throw UserError(fmt::format("{}: argument 'hidden_states' has shape [{}];"
                                " requires [*, hc, D]",
                                fn, fmt::join(x.shape(), ", ")));
  if (k.shape() != x.shape())
    throw UserError(fmt::format("{}: argument 'k' has shape [{}]; requires "
                                "the shape of hidden_states, [{}]",
                                fn, fmt::join(k.shape(), ", "),
                                fmt::join(x.shape(), ", ")));
  std::vector<int64_t> want(x.shape().begin(), x.shape().end() - 2);
  want.push_back(x.shape().back());
  if (v.shape() != want)
    throw UserError(fmt::format("{}: argument 'v' has shape [{}]; requires "
                                "[*, D] = [{}]",
                                fn, fmt::join(v.shape(), ", "),
                                fmt::join(want, ", ")));
}

/// grad_k of the flattened k, given the shape of k: the same memory layout
/// with the token dim split back into k's leading dims.
HostTensor unflatten_grad_k(const HostTensor &flat,
                            const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size());
  const int lead = static_cast<int>(shape.size()) - 2;
  strides[lead] = flat.stride(1);
  strides[lead + 1] = flat.stride(2);
  int64_t running = flat.stride(0);
  for (int i = lead; i-- > 0;) {
    strides[i] = running;
    running *= shape[i];
  }
  HostTensor out = HostTensor::zeros_strided(DType::bf16, shape, strides);
  const uint16_t *src = flat.data<uint16_t>();
  uint16_t *dst = out.data<uint16_t>();
  for (int64_t t = 0; t < flat.size(0); ++t)
    for (int64_t h = 0; h < flat.size(1); ++h)
      for (int64_t d = 0; d < flat.size(2); ++d) {
        int64_t o = t * flat.stride(0) + h * flat.stride(1) + d;
        dst[o] = src[o];
      }
  return out;
}

/// A main_grad buffer, or fresh f32 zeros of the weight's shape.
HostTensor grad_buffer(std::string_view arg,
                       const std::optional<HostTensor> &main_grad,
                       const HostTensor &weight) {
  if (!main_grad)
    return HostTensor::zeros(DType::f32, weight.shape());
  const HostTensor &g = *main_grad;
  if (g.dtype() != DType::f32 || g.shape() != weight.shape() ||
      !g.is_contiguous())
    throw UserError(fmt::format("{}: argument '{}' is {}; requires a "
                                "contiguous f32 tensor of shape [{}]",
                                kBwd, arg, g.to_string(),
                                fmt::join(weight.shape(), ", ")));
  return g;
}

} // namespace

EngramGateOutput engram_gate_ref(const HostTensor &hidden_states,
                                 const HostTensor &k, const HostTensor &v,
                                 const HostTensor &weight_hidden,
                                 const HostTensor &weight_embed,
                                 float clamp_value, float eps) {
  check_layer_shapes(kFwd, hidden_states, k, v);
  HostTensor w = engram::fused_weight_ref(weight_hidden, weight_embed);
  engram::EngramGateFwdResult fwd = engram::engram_gate_fwd_ref(
      flatten_leading(hidden_states, 2), flatten_leading(k, 2),
      flatten_leading(v, 1), w, eps, clamp_value, true);
  EngramGateOutput r;
  r.out = fwd.out.reinterpret(DType::bf16, hidden_states.shape());
  r.saved = {hidden_states, k,           v,          weight_hidden,
             weight_embed,  w,           *fwd.dot,   *fwd.gate_score,
             *fwd.rstd_x,   *fwd.rstd_k, clamp_value};
  return r;
}

EngramGateGrads engram_gate_backward_ref(
    const EngramGateSaved &saved, const HostTensor &grad_out,
    const std::optional<HostTensor> &weight_hidden_main_grad,
    const std::optional<HostTensor> &weight_embed_main_grad, int64_t num_sms) {
  const HostTensor &x = saved.hidden_states;
  if (grad_out.dtype() != DType::bf16 || grad_out.shape() != x.shape())
    throw UserError(fmt::format("{}: argument 'grad_out' is {}; requires bf16 "
                                "of the shape of hidden_states, [{}]",
                                kBwd, grad_out.to_string(),
                                fmt::join(x.shape(), ", ")));
  const int64_t hidden = x.shape().back();
  // grad_w_reduce needs D % 512 == 0; the layer's backward inherits it.
  if (hidden % 512 != 0)
    throw UserError(fmt::format("{}: argument 'hidden_states' has hidden size "
                                "D = {}; requires D % 512 == 0 (grad_w_reduce)",
                                kBwd, hidden));
  // The kernel wants a contiguous grad_out; a strided one is copied (what
  // .contiguous() would do).
  HostTensor go = flatten_leading(grad_out, 2);
  if (!go.is_contiguous())
    go = go.clone();
  engram::EngramGateBwdResult bwd = engram::engram_gate_bwd_ref(
      go, flatten_leading(x, 2), flatten_leading(saved.k, 2),
      flatten_leading(saved.v, 1), saved.weight_fused, saved.dot,
      saved.gate_score, saved.rstd_x, saved.rstd_k, saved.clamp_value, num_sms);

  // The original asserts get_num_sms() % 4 == 0 in grad_w_reduce (a latent
  // failure on e.g. 114-SM parts, spec §7.12); zero rows padding the partial
  // to a multiple of 4 leave the sum unchanged.
  HostTensor partial = bwd.grad_w_partial;
  if (num_sms % 4 != 0) {
    const int64_t rows = (num_sms + 3) / 4 * 4, row = partial.numel() / num_sms;
    HostTensor padded =
        HostTensor::zeros(DType::f32, {rows, partial.size(1), partial.size(2)});
    std::copy(partial.data<float>(), partial.data<float>() + num_sms * row,
              padded.data<float>());
    partial = padded;
  }
  HostTensor gwh = grad_buffer("weight_hidden_main_grad",
                               weight_hidden_main_grad, saved.weight_hidden);
  HostTensor gwe = grad_buffer("weight_embed_main_grad", weight_embed_main_grad,
                               saved.weight_embed);
  engram::grad_w_reduce_ref(partial, saved.weight_hidden, saved.weight_embed,
                            gwh, gwe);

  EngramGateGrads g;
  g.grad_hidden_states = bwd.grad_x.reinterpret(DType::bf16, x.shape());
  g.grad_k = unflatten_grad_k(bwd.grad_k, saved.k.shape());
  g.grad_v = bwd.grad_v.reinterpret(DType::bf16, saved.v.shape());
  if (!weight_hidden_main_grad)
    g.grad_weight_hidden = gwh;
  if (!weight_embed_main_grad)
    g.grad_weight_embed = gwe;
  return g;
}

} // namespace tilejit::modeling
