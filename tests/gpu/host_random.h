// host_random.h - Host tensors of standard normal values for the GPU tests
// that compare a C++ entry against its CPU reference.
#pragma once

#include "common/convert.h"
#include "common/host_tensor.h"

#include <initializer_list>
#include <random>

namespace tilejit::gpu_test {

/// A bf16 (rounded) or f32 tensor of N(0, 1) values from `gen`.
inline ref::HostTensor randn(DType dtype, std::initializer_list<int64_t> shape,
                             std::mt19937_64 &gen) {
  ref::HostTensor t = ref::HostTensor::zeros(dtype, shape);
  std::normal_distribution<float> dist;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const float v = dist(gen);
    if (dtype == DType::bf16)
      t.data<uint16_t>()[i] = ref::f32_to_bf16(v);
    else
      t.data<float>()[i] = v;
  }
  return t;
}

} // namespace tilejit::gpu_test
