// engram_gate_reference.h - CPU reference of the Engram gate layer
// (EngramGateFn / engram_gate, specs/moe_engram_mhc.md §2.6): forward and
// backward composed of the Engram op references.
#pragma once

#include "common/host_tensor.h"

#include <cstdint>
#include <optional>

namespace tilejit::modeling {

using ref::HostTensor;

/// What EngramGateFn.forward saves for the backward. The tensors share
/// storage with the caller's (like ctx.save_for_backward).
struct EngramGateSaved {
  HostTensor hidden_states, k, v;             // as passed: [*, hc, D], [*, D]
  HostTensor weight_hidden, weight_embed;     // bf16 (hc, D)
  HostTensor weight_fused;                    // f32 (hc, D)
  HostTensor dot, gate_score, rstd_x, rstd_k; // f32 (T, hc), T = prod(*)
  float clamp_value = 0;
};

struct EngramGateOutput {
  HostTensor out; // bf16, the shape of hidden_states
  EngramGateSaved saved;
};

/// engram_gate(hidden_states, k, v, weight_hidden, weight_embed, clamp_value,
/// eps): flattens the leading dims (copying when they cannot be merged, like
/// torch.reshape), w = fused_weight(wh, we), then engram_gate_fwd with
/// save_for_backward. hidden_states, k bf16 [*, hc, D]; v bf16 [*, D];
/// weights bf16 (hc, D). out = x + sigmoid(signed_sqrt(...)) * v.
EngramGateOutput engram_gate_ref(const HostTensor &hidden_states,
                                 const HostTensor &k, const HostTensor &v,
                                 const HostTensor &weight_hidden,
                                 const HostTensor &weight_embed,
                                 float clamp_value, float eps);

/// Gradients returned by EngramGateFn.backward (the trailing Nones for
/// clamp_value and eps are omitted).
struct EngramGateGrads {
  HostTensor grad_hidden_states; // bf16, shape of hidden_states, contiguous
  HostTensor grad_k;             // bf16, shape of k, strides of empty_like(k)
  HostTensor grad_v;             // bf16, shape of v, contiguous
  /// f32 (hc, D); nullopt when the parameter's main_grad took the gradient.
  /// (Autograd then casts a returned gradient to the parameter's bf16.)
  std::optional<HostTensor> grad_weight_hidden, grad_weight_embed;
};

/// EngramGateFn.backward: engram_gate_bwd, then grad_w_reduce into each
/// weight's main_grad (f32 (hc, D), accumulated in place) when given, else
/// into fresh zeros that are returned. Requires hc == 4 and D % 512 == 0.
/// `num_sms` stands for get_num_sms(); any positive value works here (the
/// partial rows are zero-padded to the multiple of 4 grad_w_reduce needs).
EngramGateGrads engram_gate_backward_ref(
    const EngramGateSaved &saved, const HostTensor &grad_out,
    const std::optional<HostTensor> &weight_hidden_main_grad = std::nullopt,
    const std::optional<HostTensor> &weight_embed_main_grad = std::nullopt,
    int64_t num_sms = 132);

} // namespace tilejit::modeling
