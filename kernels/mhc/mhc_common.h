// mhc_common.h - Shared pieces of the mHC references: argument checks, bf16
// and TF32 rounding, and the per-token arithmetic sequences that fused and
// unfused paths must share (spec moe_engram_mhc.md §7.18).
#pragma once

#include "common/host_tensor.h"

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace tilejit::mhc::detail {

using ref::HostTensor;

// --- argument checks: each throws UserError naming fn, arg, value, rule ----
void check_dtype(std::string_view fn, std::string_view arg, const HostTensor &t,
                 DType want);
void check_contiguous(std::string_view fn, std::string_view arg,
                      const HostTensor &t);
/// dtype + contiguity + rank >= min_rank (`layout` describes the shape).
void check_tensor(std::string_view fn, std::string_view arg,
                  const HostTensor &t, DType want, int min_rank,
                  std::string_view layout);
void check_shape(std::string_view fn, std::string_view arg, const HostTensor &t,
                 std::span<const int64_t> want);
void check_shape(std::string_view fn, std::string_view arg, const HostTensor &t,
                 std::initializer_list<int64_t> want);
/// Throws "<fn>: argument '<arg>' has shape [..]; requires shape <layout>".
[[noreturn]] void fail_shape(std::string_view fn, std::string_view arg,
                             const HostTensor &t, std::string_view layout);
/// Throws "<fn>: argument '<arg>' is <value>; requires <rule>".
[[noreturn]] void fail_value(std::string_view fn, std::string_view arg,
                             std::string_view value, std::string_view rule);

/// Sizes of a residual (..., mhc, H) fed to the projection GEMM.
struct ResidualDims {
  int64_t n;  ///< tokens: product of the leading dims
  int mhc;    ///< streams, 1..4
  int mhc3;   ///< mhc * (mhc + 2)
  int64_t kd; ///< mhc * H
};
/// bf16, contiguous, rank >= 2, 1 <= mhc <= 4, H >= 1.
ResidualDims check_mhc_residual(std::string_view fn,
                                const HostTensor &residual);

/// The shape without its last `trailing` dims.
std::vector<int64_t> leading_shape(const HostTensor &t, int trailing);
int64_t product(std::span<const int64_t> dims);
/// `lead` followed by `tail`.
std::vector<int64_t> with_tail(std::vector<int64_t> lead,
                               std::initializer_list<int64_t> tail);

// --- element numerics --------------------------------------------------------
float bf16_value(uint16_t bits);
uint16_t bf16_bits(float v);
/// TF32 as the original feeds its MMA: add 0x1000 to the float's bits, then
/// drop the low 13 mantissa bits (round half away from zero; finite values
/// near FLT_MAX become inf). NaN stays NaN (see mhc_pre_norm_fn_ref.cpp).
float round_to_tf32(float v);
/// 1 / (1 + expf(-z)) with IEEE division and CUDA's expf (cuda_math.h).
float sigmoid(float z);
/// rsqrt(sq / kd + eps): fp32 divide and add, then the correctly rounded
/// reciprocal square root (the device rsqrtf is within 2 ulp of it).
float norm_rms(float sq, int64_t kd, float eps);

// --- per-token sequences (shared by fused and unfused references) -----------
/// acc = 0; for m: acc = fma(mix[m], x[m], acc)  (spec §3.5).
float apply_mix_chain(const float *mix, const float *x, int mhc);
/// acc = post * y; for i: acc = fma(comb[i*mhc+o], res[i], acc)  (§3.6).
float post_chain(float post, float y, const float *comb, const float *res,
                 int mhc, int o);
/// mul[j] = sum_k x[k]*fnr[j,k], sq = sum_k x[k]^2, both summed in float64
/// and rounded once to fp32 (the original: TF32 MMA, fp32 accumulate).
void norm_fn_token(const uint16_t *x, const float *fnr, int64_t kd, int mhc3,
                   float *mul, float *sq);
/// pre/post/comb of one token from its mhc3 mixes (§3.4), `in*scale+base` as
/// one fma.
void split_mixes_token(const float *in, const float *scale, const float *base,
                       int mhc, float post_mult, float pre_eps, float *pre,
                       float *post, float *comb);
/// Intermediates of one Sinkhorn forward, for the backward (§3.2): the
/// softmax A0, and for each step k = 1 .. 2*repeat-1 its input A(k) and the
/// sums it divided by (column sums for odd k, row sums for even k).
struct SinkhornTrace {
  std::vector<float> softmax;
  std::vector<std::vector<float>> inputs, sums; // index k; [0] unused
};
/// Sinkhorn forward of one n x n matrix (§3.2), fp32, sums in index order;
/// fills `trace` when given.
void sinkhorn_matrix(const float *x, float *y, int n, int repeat, float eps,
                     SinkhornTrace *trace = nullptr);

} // namespace tilejit::mhc::detail
