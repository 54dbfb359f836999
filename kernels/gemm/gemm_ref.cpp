// gemm_ref.cpp - C = A * B^T on the CPU, in float64.
#include "gemm/reference.h"

#include "common/convert.h"

#include "tilejit/error.h"

#include <fmt/format.h>

namespace tilejit::gemm {

static void check(const HostTensor &a, const HostTensor &b) {
  DType d = a.dtype();
  if (a.rank() != 2 || b.rank() != 2 || a.size(1) != b.size(1) ||
      d != b.dtype() ||
      (d != DType::bf16 && d != DType::f16 && d != DType::f32 &&
       d != DType::e4m3 && d != DType::e5m2))
    throw UserError(fmt::format("gemm_ref: A {} and B {} must be bf16, f16, "
                                "f32, e4m3 or e5m2 (M, K) and (N, K) of one "
                                "dtype",
                                a.to_string(), b.to_string()));
}

static double element(const HostTensor &t, int64_t r, int64_t c) {
  switch (t.dtype()) {
  case DType::bf16:
    return ref::bf16_to_f32(t.at<uint16_t>({r, c}));
  case DType::f16:
    return ref::f16_to_f32(t.at<uint16_t>({r, c}));
  case DType::f32:
    return t.at<float>({r, c});
  case DType::e4m3:
    return ref::e4m3_to_f32(t.at<uint8_t>({r, c}));
  default:
    return ref::e5m2_to_f32(t.at<uint8_t>({r, c}));
  }
}

std::vector<double> gemm_ref_row(const HostTensor &a, const HostTensor &b,
                                 int64_t row) {
  check(a, b);
  const int64_t n = b.size(0), k = a.size(1);
  std::vector<double> arow(static_cast<size_t>(k));
  for (int64_t j = 0; j < k; ++j)
    arow[static_cast<size_t>(j)] = element(a, row, j);
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t col = 0; col < n; ++col) {
    double sum = 0;
    for (int64_t j = 0; j < k; ++j)
      sum += arow[static_cast<size_t>(j)] * element(b, col, j);
    out[static_cast<size_t>(col)] = sum;
  }
  return out;
}

HostTensor gemm_ref(const HostTensor &a, const HostTensor &b, DType out_dtype) {
  check(a, b);
  const int64_t m = a.size(0), n = b.size(0);
  HostTensor c = HostTensor::zeros(out_dtype, {m, n});
  for (int64_t row = 0; row < m; ++row) {
    std::vector<double> r = gemm_ref_row(a, b, row);
    for (int64_t col = 0; col < n; ++col) {
      float v = static_cast<float>(r[static_cast<size_t>(col)]);
      if (out_dtype == DType::f32)
        c.at<float>({row, col}) = v;
      else if (out_dtype == DType::bf16)
        c.at<uint16_t>({row, col}) = ref::f32_to_bf16(v);
      else
        c.at<uint16_t>({row, col}) = ref::f32_to_f16(v);
    }
  }
  return c;
}

} // namespace tilejit::gemm
