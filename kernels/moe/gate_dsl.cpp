// gate_dsl.cpp - What the MoE routers share (gate_dsl.h).
#include "moe/gate_dsl.h"

#include <limits>

namespace tilejit::moe {

std::vector<dsl::Value> top_k_rounds(dsl::KernelBuilder &k, dsl::Value sel,
                                     dsl::Value col, int topk) {
  auto none = k.constant(std::numeric_limits<int32_t>::max(), DType::i32);
  auto minus_inf =
      k.constant(-std::numeric_limits<float>::infinity(), DType::f32);
  std::vector<dsl::Value> picks;
  for (int r = 0; r < topk; ++r) {
    auto best = k.reduce_max(sel, 1);
    auto pick = k.reduce_min(k.select(k.eq(sel, best), col, none), 1);
    if (r + 1 < topk)
      sel = k.select(k.eq(col, pick), minus_inf, sel);
    picks.push_back(pick);
  }
  return picks;
}

dsl::Value slots_of(dsl::KernelBuilder &k, const std::vector<dsl::Value> &picks,
                    dsl::Value slot) {
  const std::vector<int64_t> shape = slot.shape();
  auto out = k.full(shape, -1, DType::i32);
  for (size_t j = 0; j < picks.size(); ++j)
    out = k.select(k.eq(slot, k.constant(static_cast<double>(j), DType::i32)),
                   k.broadcast(picks[j], shape), out);
  return out;
}

dsl::Value physical_expert(dsl::KernelBuilder &k, dsl::Value expert,
                           dsl::Value token, const dsl::Tensor &count,
                           const dsl::Tensor &map, dsl::Value ep_rank) {
  const auto i64 = DType::i64;
  auto copies =
      k.max(k.cast(k.load_at(count, {expert}), i64), k.constant(1, i64));
  auto hash = ep_rank + token * k.constant(23333, i64);
  auto dup = hash - (hash / copies) * copies;
  return k.load_at(map, {expert, dup});
}

ops::TensorShape router_slots(std::string_view output,
                              const ops::ShapeArgs &a) {
  const int64_t shared =
      a.flag("use_shared_as_routed") ? a.integer("num_shared_experts") : 0;
  const int64_t width = a.integer("num_topk") + shared;
  return {output == "topk_idx" ? DType::i64 : DType::f32,
          {a.dim("T"), width},
          {width, 1}};
}

} // namespace tilejit::moe
