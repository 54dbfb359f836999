// expand_to_fused_ref.cpp - CPU references of expand_to_fused and
// expand_to_fused_with_sf (spec §1.6, §1.7): copy each token's row to every
// fused position it is routed to; zero all other rows.
#include "moe/check.h"
#include "moe/reference.h"

#include <cstring>

namespace tilejit::moe {

namespace {

/// Checks the two maps against `tokens` rows of x; returns N.
int64_t check_maps(std::string_view fn, const HostTensor &token_topk_to_pos,
                   const HostTensor &pos_to_expert, int64_t tokens) {
  detail::check_tensor(fn, "token_topk_to_pos", token_topk_to_pos, DType::i32,
                       2);
  if (token_topk_to_pos.size(0) != tokens)
    detail::fail(fn,
                 "argument 'token_topk_to_pos' has shape [{}]; requires "
                 "{} rows (T, the rows of 'x')",
                 fmt::join(token_topk_to_pos.shape(), ", "), tokens);
  detail::check_tensor(fn, "pos_to_expert", pos_to_expert, DType::i32, 1);
  const int64_t positions = pos_to_expert.size(0);
  const int32_t *pos = token_topk_to_pos.data<int32_t>();
  for (int64_t i = 0; i < token_topk_to_pos.numel(); ++i)
    if (pos[i] >= positions)
      detail::fail(fn,
                   "argument 'token_topk_to_pos' holds {} at [{}, {}]; "
                   "requires a negative value (unused) or a position below "
                   "{} (the size of 'pos_to_expert')",
                   pos[i], i / token_topk_to_pos.size(1),
                   i % token_topk_to_pos.size(1), positions);
  return positions;
}

/// dst[p, :] = src[t, :] for every p = token_topk_to_pos[t, k] >= 0. dst
/// starts zero-filled, which covers the rows with pos_to_expert < 0 and
/// (unlike the original, which leaves them uninitialised, spec §7.7) the
/// rows no (t, k) targets. A position targeted although pos_to_expert is
/// negative there (an inconsistent mapping, a race in the original) gets
/// the copy.
void scatter_rows(const HostTensor &src, const HostTensor &token_topk_to_pos,
                  HostTensor &dst) {
  const int64_t tokens = src.size(0), width = src.size(1);
  const int64_t topk = token_topk_to_pos.size(1);
  const std::size_t bytes = size_of(src.dtype());
  const int32_t *pos = token_topk_to_pos.data<int32_t>();
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t k = 0; k < topk; ++k) {
      const int64_t p = pos[t * topk + k];
      if (p < 0)
        continue;
      for (int64_t i = 0; i < width; ++i)
        std::memcpy(dst.raw() + (p * dst.stride(0) + i * dst.stride(1)) * bytes,
                    src.raw() + (t * width + i) * bytes, bytes);
    }
}

} // namespace

HostTensor expand_to_fused_ref(const HostTensor &x,
                               const HostTensor &token_topk_to_pos,
                               const HostTensor &pos_to_expert) {
  constexpr std::string_view fn = "expand_to_fused_ref";
  detail::check_rank(fn, "x", x, 2);
  detail::check_contiguous(fn, "x", x);
  const int64_t positions =
      check_maps(fn, token_topk_to_pos, pos_to_expert, x.size(0));
  HostTensor out = HostTensor::zeros(x.dtype(), {positions, x.size(1)});
  scatter_rows(x, token_topk_to_pos, out);
  return out;
}

ExpandToFusedWithSfResult expand_to_fused_with_sf_ref(
    const std::pair<HostTensor, HostTensor> &x, int64_t num_per_channels,
    const HostTensor &token_topk_to_pos, const HostTensor &pos_to_expert,
    bool use_tma_aligned_col_major_sf) {
  constexpr std::string_view fn = "expand_to_fused_with_sf_ref";
  const auto &[data, sf] = x;
  detail::check_rank(fn, "x.data", data, 2);
  detail::check_contiguous(fn, "x.data", data);
  const int64_t tokens = data.size(0), hidden = data.size(1);
  if (num_per_channels != 32 && num_per_channels != 128)
    detail::fail(fn, "argument 'num_per_channels' is {}; requires 32 or 128",
                 num_per_channels);
  detail::check_rank(fn, "x.sf", sf, 2);
  detail::check_contiguous(fn, "x.sf", sf);
  const int64_t groups = detail::ceil_div(hidden, num_per_channels);
  int64_t sf_cols = groups;
  if (sf.dtype() == DType::i32) {
    if (!use_tma_aligned_col_major_sf)
      detail::fail(fn, "argument 'x.sf' has dtype i32 (packed UE8M0); "
                       "requires use_tma_aligned_col_major_sf");
    sf_cols = detail::ceil_div(groups, 4);
  } else if (sf.dtype() != DType::f32) {
    detail::fail(fn,
                 "argument 'x.sf' has dtype {}; requires f32 or i32 "
                 "(packed UE8M0)",
                 name_of(sf.dtype()));
  }
  detail::check_shape(fn, "x.sf", sf, {tokens, sf_cols},
                      sf.dtype() == DType::i32
                          ? "(T, ceil(ceil(H / num_per_channels) / 4))"
                          : "(T, ceil(H / num_per_channels))");
  const int64_t positions =
      check_maps(fn, token_topk_to_pos, pos_to_expert, tokens);
  ExpandToFusedWithSfResult r;
  r.out = HostTensor::zeros(data.dtype(), {positions, hidden});
  scatter_rows(data, token_topk_to_pos, r.out);
  if (use_tma_aligned_col_major_sf) {
    // Storage (hidden_sf, align(N, 4)), returned transposed: (N, hidden_sf)
    // with strides (1, align(N, 4)); the pad columns stay zero.
    const int64_t shape[2] = {positions, sf_cols};
    const int64_t strides[2] = {1, detail::align(positions, 4)};
    r.out_sf = HostTensor::zeros_strided(sf.dtype(), shape, strides);
  } else {
    r.out_sf = HostTensor::zeros(sf.dtype(), {positions, sf_cols});
  }
  scatter_rows(sf, token_topk_to_pos, r.out_sf);
  return r;
}

} // namespace tilejit::moe
