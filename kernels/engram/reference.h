// reference.h - CPU references of the Engram ops (specs/moe_engram_mhc.md §2):
// n-gram hashing, the fused gate weight, the gate forward and backward and
// the weight-gradient reduction.
#pragma once

#include "common/host_tensor.h"

#include <cstdint>
#include <optional>

namespace tilejit::engram {

using ref::HostTensor;

/// Multi-table n-gram hash (§2.1). ngram_token_ids i32 (T, n), multipliers
/// i64 (L, n), vocab_sizes i32 (L, n-1, M) all > 0, offsets i32
/// (L, (n-1)*M); all contiguous. Returns i32 (L, T, (n-1)*M):
///   h = x[t,0]*m[l,0];  for i >= 1: h ^= x[t,i]*m[l,i]   (int64, wrapping)
///   out[l,t,(i-1)*M+j] = int32(floor_mod(h, vocab[l,i-1,j]) + offsets[...])
/// e.g. x = [[1, 2]], m = [[3, 5]], vocab = [[[4]]], offsets = [[10]] gives
/// floor_mod(3 ^ 10, 4) + 10 = 11. TileKernels 2.1's image_token_mask
/// (bool (T,), contiguous): every column of a masked token, in every layer,
/// is -1 (tk21_ops.md §5.1).
HostTensor engram_hash_ref(
    const HostTensor &ngram_token_ids, const HostTensor &multipliers,
    const HostTensor &vocab_sizes, const HostTensor &offsets,
    const std::optional<HostTensor> &image_token_mask = std::nullopt);

/// w = float(weight_hidden) * float(weight_embed), exact (§2.2). Both bf16
/// (hc, D) contiguous with D % 256 == 0; returns f32 (hc, D).
HostTensor fused_weight_ref(const HostTensor &weight_hidden,
                            const HostTensor &weight_embed);

/// Outputs of engram_gate_fwd; the four saved tensors are f32 (T, hc) and
/// empty (nullopt) when save_for_backward is false.
struct EngramGateFwdResult {
  HostTensor out;                // bf16 (T, hc, D), contiguous
  std::optional<HostTensor> dot; // raw sum_d x*w*k (no rstd, no 1/sqrt(D))
  std::optional<HostTensor> gate_score;
  std::optional<HostTensor> rstd_x;
  std::optional<HostTensor> rstd_k;
};

/// Engram gate forward (§2.3), in float64; saved values rounded to f32.
/// hidden_states bf16 (T, hc, D) contiguous; k bf16 (T, hc, D) with unit last
/// stride; v bf16 (T, D) with unit last stride; weight_fused f32 (hc, D)
/// contiguous; D % 256 == 0. Per (t, h):
///   z = dot * rstd_x * rstd_k / sqrt(D),  rstd = 1/sqrt(sum(.^2)/D + eps)
///   g = sigmoid(copysign(sqrt(max(|z|, clamp_value)), z))
///   out = bf16(fma(g, v, x))            (z == 0 gives sigmoid(+sqrt(clamp)))
/// TileKernels 2.1's image_token_mask (bool (T,), contiguous): an image
/// token's out is its x; its saved values are computed as any token's (as
/// 2.1's torch reference; TileKernels' kernel leaves them unwritten).
EngramGateFwdResult engram_gate_fwd_ref(
    const HostTensor &hidden_states, const HostTensor &k, const HostTensor &v,
    const HostTensor &weight_fused, float eps, float clamp_value,
    bool save_for_backward = true,
    const std::optional<HostTensor> &image_token_mask = std::nullopt);

struct EngramGateBwdResult {
  HostTensor grad_x;         // bf16 (T, hc, D), contiguous
  HostTensor grad_k;         // bf16 (T, hc, D), strides of empty_like(k)
  HostTensor grad_v;         // bf16 (T, D), contiguous
  HostTensor grad_w_partial; // f32 (num_sms, hc, D)
};

/// Engram gate backward (§2.4), in float64 from the saved f32 values. Requires
/// hc == 4 and D % 256 == 0; dot, gate_score, rstd_x, rstd_k are f32 (T, hc)
/// contiguous. grad_w_partial[b] is dL/dweight_fused summed over the tokens
/// [b*ceil(T/num_sms), min((b+1)*ceil(T/num_sms), T)) (zeros where empty).
/// `num_sms` stands for the original's get_num_sms() (132 on an H200).
/// TileKernels 2.1's image_token_mask (bool (T,), contiguous): an image
/// token's grad_x is its grad_out, its grad_k and grad_v rows are 0, and it
/// adds nothing to grad_w_partial (tk21_ops.md §5.3).
EngramGateBwdResult engram_gate_bwd_ref(
    const HostTensor &grad_out, const HostTensor &hidden_states,
    const HostTensor &k, const HostTensor &v, const HostTensor &weight_fused,
    const HostTensor &dot, const HostTensor &gate_score,
    const HostTensor &rstd_x, const HostTensor &rstd_k, float clamp_value,
    int64_t num_sms = 132,
    const std::optional<HostTensor> &image_token_mask = std::nullopt);

/// gw = sum_b grad_w_partial[b]; grad_weight_hidden += gw * weight_embed;
/// grad_weight_embed += gw * weight_hidden, in place (§2.5). grad_w_partial
/// f32 (B, hc, D) with B % 4 == 0 and D % 512 == 0; weights bf16 (hc, D);
/// accumulators f32 (hc, D); all contiguous.
void grad_w_reduce_ref(const HostTensor &grad_w_partial,
                       const HostTensor &weight_hidden,
                       const HostTensor &weight_embed,
                       const HostTensor &grad_weight_hidden,
                       const HostTensor &grad_weight_embed);

// --- TileKernels 2.1: Engram Sinkhorn (tk21_ops.md §5.4) -------------------

/// m32 = fmaf(m, fl32(beta1), fl32(1 - beta1) * g) per element; the buffer
/// (bf16 or f32, updated in place) gets m32 in its dtype, and the result
/// (f32, grad's shape) is fmaf(g, c1, c0 * m32) (nesterov, from the
/// unrounded m32) or m32. grad bf16 or f32; both contiguous, one shape, a
/// multiple of 256 elements. Bit-exact with the kernel's FMAs.
HostTensor
engram_sinkhorn_momentum_update_ref(const HostTensor &grad,
                                    const HostTensor &momentum_buffer,
                                    double beta1, bool nesterov = true);

struct EngramSinkhornStepResult {
  HostTensor row_norm;          ///< f32 (R,)
  HostTensor col_sumsq_partial; ///< f32 (num_partials, Dh)
};
/// One row step of matrix f32 (R, Dh), Dh a multiple of 256: x = (rs * M)
/// * cs, n = |x|, row_scale *= 1 / (n + eps) in place; block p of
/// num_partials (TileKernels: 3 x the SMs) takes the rows [p * rpc, (p + 1)
/// * rpc), rpc = ceil(R / num_partials), and sums (x / (n + eps))^2 over
/// them into its partial row (f32, in row order). The norm's sum of squares
/// is in float64 (the kernel's f32 tree: a tolerance).
EngramSinkhornStepResult engram_sinkhorn_step_ref(const HostTensor &matrix,
                                                  const HostTensor &row_scale,
                                                  const HostTensor &col_scale,
                                                  float eps,
                                                  int64_t num_partials = 396);

/// col_sumsq[c] = the partials' column c added in partial order (f32), in
/// place; bit-exact. col_sumsq_partial f32 (P, Dh), Dh a multiple of 256.
void engram_sinkhorn_step_reduce_ref(const HostTensor &col_sumsq_partial,
                                     const HostTensor &col_sumsq);

/// out[r, c] = x_c * (alpha / (|x| + eps)) with x = (rs * M[r]) * cs, f32
/// (R, Dh); the norm as in engram_sinkhorn_step_ref.
HostTensor engram_sinkhorn_finalize_ref(const HostTensor &matrix,
                                        const HostTensor &row_scale,
                                        const HostTensor &col_scale, float eps,
                                        float alpha);

} // namespace tilejit::engram
