// moe_test_util.h - Small builders and readers of host tensors for the MoE
// reference tests.
#pragma once

#include "moe/reference.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace moe_test {

using tilejit::DType;
using tilejit::ref::HostTensor;

inline HostTensor f32(std::vector<int64_t> shape, std::vector<float> v) {
  return HostTensor::from<float>(DType::f32, shape, v);
}
inline HostTensor i64(std::vector<int64_t> shape, std::vector<int64_t> v) {
  return HostTensor::from<int64_t>(DType::i64, shape, v);
}
inline HostTensor i32(std::vector<int64_t> shape, std::vector<int32_t> v) {
  return HostTensor::from<int32_t>(DType::i32, shape, v);
}
inline HostTensor boolean(std::vector<uint8_t> v) {
  const std::vector<int64_t> shape = {static_cast<int64_t>(v.size())};
  return HostTensor::from<uint8_t>(DType::boolean, shape, v);
}

/// All elements of a contiguous tensor, in order.
template <class T> std::vector<T> values(const HostTensor &t) {
  const T *p = t.data<T>();
  return std::vector<T>(p, p + t.numel());
}

/// Row t of a contiguous 2-D tensor.
template <class T> std::vector<T> row(const HostTensor &t, int64_t r) {
  const T *p = t.data<T>() + r * t.size(1);
  return std::vector<T>(p, p + t.size(1));
}

/// spec §0.3 generate_topk_idx, scaled down: each row holds 1..topk distinct
/// experts of [0, experts) in random slots, -1 elsewhere.
inline HostTensor random_topk_idx(std::mt19937 &rng, int64_t tokens,
                                  int64_t topk, int64_t experts) {
  HostTensor t = HostTensor::zeros(DType::i64, {tokens, topk});
  for (int64_t r = 0; r < tokens; ++r) {
    std::vector<int64_t> ids(experts);
    for (int64_t e = 0; e < experts; ++e)
      ids[e] = e;
    std::shuffle(ids.begin(), ids.end(), rng);
    const int64_t valid =
        1 + static_cast<int64_t>(rng() % std::min(topk, experts));
    std::vector<int64_t> slots(topk, -1);
    for (int64_t k = 0; k < valid; ++k)
      slots[k] = ids[k];
    std::shuffle(slots.begin(), slots.end(), rng);
    for (int64_t k = 0; k < topk; ++k)
      t.at<int64_t>({r, k}) = slots[k];
  }
  return t;
}

} // namespace moe_test
