// cuda_math.h - CUDA's expf and log1pf as the CPU references call them.
// DeepSeek's references and TileKernels' kernels compute e^x with CUDA's expf
// (libdevice __nv_expf: torch.exp, T.exp), which differs from glibc's expf
// on 7.1 % of f32 arguments (4.8 % of bf16 ones), by up to 2 ulp (measured
// on the H200 by tools/gpu/expf_survey.py), and whose ex2.approx step no
// CPU reproduces. So a reference calls cuda_expf: glibc's expf, unless the
// GPU harness has installed CUDA's values for its arguments (ExpfValues;
// computed by the DSL's exp, which tests/gpu/math_cuda_gpu_test.cpp proves
// equal to nvcc's expf on every f32). Thread-local: references run on
// several threads at once.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace tilejit::ref {

/// e^x: CUDA's value where installed on this thread, else glibc's expf.
float cuda_expf(float x);

/// log(1 + x) bit for bit as CUDA's log1pf (libdevice __nv_log1pf without
/// flush-to-zero, the DSL's k.log1p): its steps in f32 with fmaf, the
/// round-toward-zero 1 + x computed exactly. Proven on the GPU against
/// k.log1p (tests/gpu/math_cuda_gpu_test.cpp).
float cuda_log1pf(float x);

/// While alive, records on this thread every argument cuda_expf sees.
class ExpfRecorder {
public:
  ExpfRecorder();
  ~ExpfRecorder();
  ExpfRecorder(const ExpfRecorder &) = delete;
  ExpfRecorder &operator=(const ExpfRecorder &) = delete;
  /// The distinct arguments so far (by bits), in no particular order.
  std::vector<float> arguments() const;
};

/// While alive, cuda_expf(args[i]) on this thread returns values[i] bit
/// for bit; other arguments fall back to glibc's expf and are counted.
class ExpfValues {
public:
  ExpfValues(std::span<const float> args, std::span<const float> values);
  ~ExpfValues();
  ExpfValues(const ExpfValues &) = delete;
  ExpfValues &operator=(const ExpfValues &) = delete;
  /// Calls whose argument had no installed value.
  int64_t misses() const;
};

} // namespace tilejit::ref
