// mhc_reduce_partials_ref.cpp - CPU references of TileKernels 2.1's
// mhc_reduce_partials_and_rmsnorm_fwd / _bwd (shared/specs/tk21_ops.md §6.2):
// the RMS-norm half of the removed mhc_pre_norm_fn, fed by a split-K GEMM's
// partials, over G groups of the K dimension.
#include "mhc/mhc_common.h"
#include "mhc/reference.h"

#include <cmath>
#include <fmt/format.h>

namespace tilejit::mhc {

namespace {

constexpr std::string_view fwd = "mhc_reduce_partials_and_rmsnorm_fwd_ref";
constexpr std::string_view bwd = "mhc_reduce_partials_and_rmsnorm_bwd_ref";

void check_group(std::string_view fn, int64_t rms_group_size) {
  if (rms_group_size < 1)
    detail::fail_value(fn, "rms_group_size", std::to_string(rms_group_size),
                       ">= 1 (the K elements of a group)");
}

/// rsqrt(sq / group + eps) in f32 (the kernel's rsqrtf is approximate:
/// compared with a tolerance).
float inverse_rms(float sq, int64_t group, float eps) {
  return 1.0f / std::sqrt(sq / static_cast<float>(group) + eps);
}

} // namespace

MhcReducePartialsResult
mhc_reduce_partials_and_rmsnorm_fwd_ref(const HostTensor &out_mul_splitted,
                                        const HostTensor &sqrsum_splitted,
                                        int64_t rms_group_size, float rms_eps) {
  detail::check_tensor(fwd, "out_mul_splitted", out_mul_splitted, DType::f32, 4,
                       "(n_splits, T, G, N3)");
  if (out_mul_splitted.rank() != 4)
    detail::fail_shape(fwd, "out_mul_splitted", out_mul_splitted,
                       "(n_splits, T, G, N3)");
  const int64_t splits = out_mul_splitted.size(0),
                tokens = out_mul_splitted.size(1),
                groups = out_mul_splitted.size(2),
                n3 = out_mul_splitted.size(3);
  detail::check_tensor(fwd, "sqrsum_splitted", sqrsum_splitted, DType::f32, 3,
                       "(n_splits, T, G)");
  detail::check_shape(fwd, "sqrsum_splitted", sqrsum_splitted,
                      {splits, tokens, groups});
  check_group(fwd, rms_group_size);
  MhcReducePartialsResult r{HostTensor::zeros(DType::f32, {tokens, groups, n3}),
                            HostTensor::zeros(DType::f32, {tokens, groups}),
                            HostTensor::zeros(DType::f32, {tokens, n3})};
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t k = 0; k < groups; ++k) {
      // The splits added one by one in f32, in split order.
      float sq = 0;
      for (int64_t s = 0; s < splits; ++s)
        sq += sqrsum_splitted.at<float>({s, t, k});
      r.sqrsum.at<float>({t, k}) = sq;
      const float inv = inverse_rms(sq, rms_group_size, rms_eps);
      for (int64_t j = 0; j < n3; ++j) {
        float m = 0;
        for (int64_t s = 0; s < splits; ++s)
          m += out_mul_splitted.at<float>({s, t, k, j});
        r.out_mul.at<float>({t, k, j}) = m;
        // The groups' terms in group order, one FMA each.
        float &acc = r.out.at<float>({t, j});
        acc = std::fma(m, inv, acc);
      }
    }
  return r;
}

MhcReducePartialsGrads mhc_reduce_partials_and_rmsnorm_bwd_ref(
    const HostTensor &out_grad, const HostTensor &out_mul,
    const HostTensor &sqrsum, int64_t rms_group_size, float rms_eps) {
  detail::check_tensor(bwd, "out_mul", out_mul, DType::f32, 3, "(T, G, N3)");
  if (out_mul.rank() != 3)
    detail::fail_shape(bwd, "out_mul", out_mul, "(T, G, N3)");
  const int64_t tokens = out_mul.size(0), groups = out_mul.size(1),
                n3 = out_mul.size(2);
  detail::check_tensor(bwd, "out_grad", out_grad, DType::f32, 2, "(T, N3)");
  detail::check_shape(bwd, "out_grad", out_grad, {tokens, n3});
  detail::check_tensor(bwd, "sqrsum", sqrsum, DType::f32, 2, "(T, G)");
  detail::check_shape(bwd, "sqrsum", sqrsum, {tokens, groups});
  check_group(bwd, rms_group_size);
  // C = eps * group in double, rounded to f32, as the original.
  const auto c = static_cast<float>(static_cast<double>(rms_eps) *
                                    static_cast<double>(rms_group_size));
  MhcReducePartialsGrads g{HostTensor::zeros(DType::f32, {tokens, groups, n3}),
                           HostTensor::zeros(DType::f32, {tokens, groups})};
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t k = 0; k < groups; ++k) {
      const float sq = sqrsum.at<float>({t, k});
      const float inv = inverse_rms(sq, rms_group_size, rms_eps);
      double rg = 0; // the block reducer's sum, in float64 here
      for (int64_t j = 0; j < n3; ++j) {
        const float go = out_grad.at<float>({t, j});
        g.out_mul_grad.at<float>({t, k, j}) = go * inv;
        rg += static_cast<double>(go) * out_mul.at<float>({t, k, j});
      }
      g.sqrsum_grad.at<float>({t, k}) =
          static_cast<float>(rg) * inv / (sq + c) / -2.0f;
    }
  return g;
}

} // namespace tilejit::mhc
