// get_fused_mapping_ref.cpp - CPU reference of get_fused_mapping (spec
// §1.5): the token x slot <-> expert-major ("fused") position maps.
#include "moe/check.h"
#include "moe/reference.h"

#include <limits>

namespace tilejit::moe {

FusedMapping get_fused_mapping_ref(const HostTensor &topk_idx,
                                   int64_t num_experts,
                                   int64_t num_expanded_tokens,
                                   int64_t alignment, bool force_no_sync) {
  constexpr std::string_view fn = "get_fused_mapping_ref";
  detail::check_tensor(fn, "topk_idx", topk_idx, DType::i64, 2);
  const int64_t tokens = topk_idx.size(0), topk = topk_idx.size(1);
  if (num_experts < 1 || num_experts > 1024)
    detail::fail(fn, "argument 'num_experts' is {}; requires 1 to 1024",
                 num_experts);
  if (alignment < 1)
    detail::fail(fn, "argument 'alignment' is {}; requires >= 1", alignment);
  if (num_expanded_tokens < 0)
    detail::fail(fn, "argument 'num_expanded_tokens' is {}; requires >= 0",
                 num_expanded_tokens);
  if (tokens * topk > std::numeric_limits<int32_t>::max())
    detail::fail(fn,
                 "argument 'topk_idx' has shape [{}, {}]; requires fewer "
                 "than 2^31 entries (the maps are int32)",
                 tokens, topk);
  const int64_t *idx = topk_idx.data<int64_t>();
  std::vector<int64_t> count(num_experts, 0);
  for (int64_t f = 0; f < tokens * topk; ++f) {
    // Only -1 marks an unused slot in the original; other negatives and
    // ids >= E are undefined there (spec §7.6) and rejected here.
    if (idx[f] < -1 || idx[f] >= num_experts)
      detail::fail(fn,
                   "argument 'topk_idx' holds {} at [{}, {}]; requires "
                   "-1 or an expert in [0, {})",
                   idx[f], f / topk, f % topk, num_experts);
    if (idx[f] >= 0)
      ++count[idx[f]];
  }
  std::vector<int64_t> start(num_experts), aligned(num_experts);
  int64_t needed = 0;
  for (int64_t e = 0; e < num_experts; ++e) {
    start[e] = needed;
    aligned[e] = detail::align(count[e], alignment);
    needed += aligned[e];
  }
  // N == 0 without force_no_sync: the original sizes the maps from the
  // counts it copies to the host. Any other N must hold every segment; the
  // original writes out of bounds when it does not (spec §7.6), and with
  // force_no_sync and N == 0 returns maps that index nothing: both rejected.
  const bool synced = num_expanded_tokens == 0 && !force_no_sync;
  const int64_t positions = synced ? needed : num_expanded_tokens;
  if (positions < needed)
    detail::fail(fn,
                 "argument 'num_expanded_tokens' is {}{}; requires at "
                 "least {} (the sum of the aligned expert counts)",
                 num_expanded_tokens,
                 force_no_sync ? " with force_no_sync" : "", needed);
  if (positions > std::numeric_limits<int32_t>::max())
    detail::fail(fn,
                 "argument 'num_expanded_tokens' is {}; requires fewer "
                 "than 2^31 positions (the maps are int32)",
                 positions);

  FusedMapping m;
  m.pos_to_expert = HostTensor::zeros(DType::i32, {positions});
  m.pos_to_token = HostTensor::zeros(DType::i32, {positions});
  m.pos_to_token_topk = HostTensor::zeros(DType::i32, {positions});
  m.token_topk_to_pos = HostTensor::zeros(DType::i32, {tokens, topk});
  m.expert_start = HostTensor::zeros(DType::i32, {num_experts});
  m.expert_end = HostTensor::zeros(DType::i32, {num_experts});
  m.num_tokens_per_expert = HostTensor::zeros(DType::i32, {num_experts});
  int32_t *to_expert = m.pos_to_expert.data<int32_t>();
  int32_t *to_token = m.pos_to_token.data<int32_t>();
  int32_t *to_token_topk = m.pos_to_token_topk.data<int32_t>();
  int32_t *to_pos = m.token_topk_to_pos.data<int32_t>();
  std::fill(to_expert, to_expert + positions, -1);
  std::fill(to_token, to_token + positions, -1);
  std::fill(to_token_topk, to_token_topk + positions, -1);
  std::fill(to_pos, to_pos + tokens * topk, -1);
  for (int64_t e = 0; e < num_experts; ++e) {
    m.expert_start.data<int32_t>()[e] = static_cast<int32_t>(start[e]);
    m.expert_end.data<int32_t>()[e] =
        static_cast<int32_t>(start[e] + aligned[e]);
    m.num_tokens_per_expert.data<int32_t>()[e] =
        static_cast<int32_t>(aligned[e]);
  }
  if (synced)
    m.num_tokens_per_expert_list = aligned;
  // Inside a segment the original orders entries by SM, warp, and in
  // reverse flat order within a warp's chunk (untested; spec §1.5). We use
  // ascending flat index t*K+k, the order the spec recommends.
  std::vector<int64_t> next = start;
  for (int64_t f = 0; f < tokens * topk; ++f) {
    if (idx[f] < 0)
      continue;
    const int64_t p = next[idx[f]]++;
    to_expert[p] = static_cast<int32_t>(idx[f]);
    to_token[p] = static_cast<int32_t>(f / topk);
    to_token_topk[p] = static_cast<int32_t>(f);
    to_pos[f] = static_cast<int32_t>(p);
  }
  return m;
}

} // namespace tilejit::moe
