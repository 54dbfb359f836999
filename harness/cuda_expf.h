// cuda_expf.h - CUDA's expf of given arguments, computed on the GPU, so
// that the harness can install them for the CPU references
// (ref::ExpfValues, common/cuda_math.h).
#pragma once

#include <span>
#include <vector>

namespace tilejit::harness {

/// e^x of every argument as CUDA's expf gives it: the DSL's exp (bit for
/// bit nvcc's expf on every f32, tests/gpu/math_cuda_gpu_test.cpp) run on
/// the current GPU. Throws NoGpuError without one.
std::vector<float> cuda_expf_values(std::span<const float> args);

} // namespace tilejit::harness
