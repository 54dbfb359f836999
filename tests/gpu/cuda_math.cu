// CUDA's expf, logf and log1pf over f32 bit patterns, compared with values
// computed elsewhere (tests/gpu/math_cuda_gpu_test.cpp).
extern "C" __global__ void fill_bits(unsigned *x, unsigned base, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = base + i;
}

template <class Fn>
__device__ void compare(const float *x, const float *got, unsigned n,
                        unsigned long long *out, Fn fn) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float want = fn(x[i]);
  bool same = __float_as_uint(want) == __float_as_uint(got[i]) ||
              (want != want && got[i] != got[i]);
  if (!same) {
    atomicAdd(&out[0], 1ull);
    atomicMin(&out[1], (unsigned long long)__float_as_uint(x[i]));
  }
}

extern "C" __global__ void check_expf(const float *x, const float *got,
                                      unsigned n, unsigned long long *out) {
  compare(x, got, n, out, [](float v) { return expf(v); });
}
extern "C" __global__ void check_logf(const float *x, const float *got,
                                      unsigned n, unsigned long long *out) {
  compare(x, got, n, out, [](float v) { return logf(v); });
}
extern "C" __global__ void check_log1pf(const float *x, const float *got,
                                        unsigned n, unsigned long long *out) {
  compare(x, got, n, out, [](float v) { return log1pf(v); });
}
