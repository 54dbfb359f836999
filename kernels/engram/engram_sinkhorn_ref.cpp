// engram_sinkhorn_ref.cpp - CPU references of TileKernels 2.1's Engram
// Sinkhorn building blocks (shared/specs/tk21_ops.md §5.4): the momentum
// update, a row-normalising step with per-block column sums of squares, the
// fixed-order reduction of those partials, and the final scaled matrix.
#include "engram/reference.h"
#include "engram/validate.h"

#include "common/convert.h"

#include <cmath>

namespace tilejit::engram {

namespace {

float load(const HostTensor &t, int64_t i) {
  return t.dtype() == DType::bf16 ? ref::bf16_to_f32(t.data<uint16_t>()[i])
                                  : t.data<float>()[i];
}

void store(const HostTensor &t, int64_t i, float v) {
  if (t.dtype() == DType::bf16)
    t.data<uint16_t>()[i] = ref::f32_to_bf16(v);
  else
    t.data<float>()[i] = v;
}

void check_flat(std::string_view fn, std::string_view arg, const HostTensor &t,
                bool bf16_too) {
  if (t.dtype() != DType::f32 && !(bf16_too && t.dtype() == DType::bf16))
    throw UserError(fmt::format("{}: argument '{}' has dtype {}; requires {}",
                                fn, arg, name_of(t.dtype()),
                                bf16_too ? "bf16 or f32" : "f32"));
  detail::check_contiguous(fn, arg, t);
}

/// The (R, Dh) matrix with its scales; Dh a multiple of 256.
void check_matrix(std::string_view fn, const HostTensor &matrix,
                  const HostTensor &row_scale, const HostTensor &col_scale) {
  detail::check_dtype(fn, "matrix", matrix, DType::f32);
  detail::check_rank(fn, "matrix", matrix, 2, "[R, Dh]");
  detail::check_contiguous(fn, "matrix", matrix);
  const int64_t rows = matrix.size(0), cols = matrix.size(1);
  if (cols % 256 != 0)
    throw UserError(fmt::format("{}: argument 'matrix' has shape [{}, {}]; "
                                "requires Dh a multiple of 256",
                                fn, rows, cols));
  detail::check_dtype(fn, "row_scale", row_scale, DType::f32);
  detail::check_shape(fn, "row_scale", row_scale, {rows}, "[R]");
  detail::check_dtype(fn, "col_scale", col_scale, DType::f32);
  detail::check_shape(fn, "col_scale", col_scale, {cols}, "[Dh]");
}

/// Row r's iterate x_c = (rs * M[r, c]) * cs_c and its norm (the sum of
/// squares in float64, the root in f32; the kernel's f32 tree is within
/// TileKernels' tolerance).
float row_iterate(const HostTensor &matrix, const HostTensor &col_scale,
                  float rs, int64_t r, std::vector<float> &x) {
  const int64_t cols = matrix.size(1);
  double sum = 0;
  for (int64_t c = 0; c < cols; ++c) {
    x[static_cast<size_t>(c)] =
        (rs * matrix.data<float>()[r * cols + c]) * col_scale.data<float>()[c];
    sum += static_cast<double>(x[static_cast<size_t>(c)]) * x[c];
  }
  return std::sqrt(static_cast<float>(sum));
}

} // namespace

HostTensor
engram_sinkhorn_momentum_update_ref(const HostTensor &grad,
                                    const HostTensor &momentum_buffer,
                                    double beta1, bool nesterov) {
  constexpr std::string_view fn = "engram_sinkhorn_momentum_update_ref";
  check_flat(fn, "grad", grad, true);
  check_flat(fn, "momentum_buffer", momentum_buffer, true);
  if (momentum_buffer.shape() != grad.shape() || grad.numel() % 256 != 0)
    throw UserError(fmt::format(
        "{}: arguments 'grad' and 'momentum_buffer' have shapes [{}] and [{}]; "
        "requires one shape of a multiple of 256 elements",
        fn, fmt::join(grad.shape(), ", "),
        fmt::join(momentum_buffer.shape(), ", ")));
  const auto c0 = static_cast<float>(beta1);
  const auto c1 = static_cast<float>(1.0 - beta1); // in double, then f32
  HostTensor out = HostTensor::zeros(DType::f32, grad.shape());
  for (int64_t i = 0; i < grad.numel(); ++i) {
    const float g = load(grad, i);
    const float m32 = std::fma(load(momentum_buffer, i), c0, c1 * g);
    store(momentum_buffer, i, m32);
    // Nesterov's look-ahead uses the unrounded m32.
    out.data<float>()[i] = nesterov ? std::fma(g, c1, c0 * m32) : m32;
  }
  return out;
}

EngramSinkhornStepResult engram_sinkhorn_step_ref(const HostTensor &matrix,
                                                  const HostTensor &row_scale,
                                                  const HostTensor &col_scale,
                                                  float eps,
                                                  int64_t num_partials) {
  constexpr std::string_view fn = "engram_sinkhorn_step_ref";
  check_matrix(fn, matrix, row_scale, col_scale);
  if (num_partials < 1)
    throw UserError(fmt::format("{}: argument 'num_partials' is {}; requires "
                                ">= 1 (3 x the SMs in TileKernels)",
                                fn, num_partials));
  const int64_t rows = matrix.size(0), cols = matrix.size(1);
  EngramSinkhornStepResult r{
      HostTensor::zeros(DType::f32, {rows}),
      HostTensor::zeros(DType::f32, {num_partials, cols})};
  // Block p takes rows [p * rpc, (p + 1) * rpc); one with none writes zeros.
  const int64_t rpc = (rows + num_partials - 1) / num_partials;
  std::vector<float> x(static_cast<size_t>(cols));
  for (int64_t p = 0; p < num_partials; ++p) {
    float *acc = r.col_sumsq_partial.data<float>() + p * cols;
    for (int64_t row = p * rpc; row < std::min((p + 1) * rpc, rows); ++row) {
      float &rs = row_scale.data<float>()[row];
      const float n = row_iterate(matrix, col_scale, rs, row, x);
      r.row_norm.data<float>()[row] = n;
      const float inv = 1.0f / (n + eps);
      rs = rs * inv;
      for (int64_t c = 0; c < cols; ++c) {
        const float y = x[static_cast<size_t>(c)] * inv;
        acc[c] += y * y;
      }
    }
  }
  return r;
}

void engram_sinkhorn_step_reduce_ref(const HostTensor &col_sumsq_partial,
                                     const HostTensor &col_sumsq) {
  constexpr std::string_view fn = "engram_sinkhorn_step_reduce_ref";
  detail::check_dtype(fn, "col_sumsq_partial", col_sumsq_partial, DType::f32);
  detail::check_rank(fn, "col_sumsq_partial", col_sumsq_partial, 2, "[P, Dh]");
  detail::check_contiguous(fn, "col_sumsq_partial", col_sumsq_partial);
  const int64_t parts = col_sumsq_partial.size(0),
                cols = col_sumsq_partial.size(1);
  if (cols % 256 != 0)
    throw UserError(fmt::format("{}: argument 'col_sumsq_partial' has shape "
                                "[{}, {}]; requires Dh a multiple of 256",
                                fn, parts, cols));
  detail::check_dtype(fn, "col_sumsq", col_sumsq, DType::f32);
  detail::check_shape(fn, "col_sumsq", col_sumsq, {cols}, "[Dh]");
  for (int64_t c = 0; c < cols; ++c) {
    float sum = 0; // partial by partial, in order
    for (int64_t p = 0; p < parts; ++p)
      sum += col_sumsq_partial.data<float>()[p * cols + c];
    col_sumsq.data<float>()[c] = sum;
  }
}

HostTensor engram_sinkhorn_finalize_ref(const HostTensor &matrix,
                                        const HostTensor &row_scale,
                                        const HostTensor &col_scale, float eps,
                                        float alpha) {
  constexpr std::string_view fn = "engram_sinkhorn_finalize_ref";
  check_matrix(fn, matrix, row_scale, col_scale);
  const int64_t rows = matrix.size(0), cols = matrix.size(1);
  HostTensor out = HostTensor::zeros(DType::f32, {rows, cols});
  std::vector<float> x(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    const float n =
        row_iterate(matrix, col_scale, row_scale.data<float>()[r], r, x);
    const float f = alpha / (n + eps);
    for (int64_t c = 0; c < cols; ++c)
      out.data<float>()[r * cols + c] = x[static_cast<size_t>(c)] * f;
  }
  return out;
}

} // namespace tilejit::engram
