// engram_sinkhorn_test.cpp - TileKernels 2.1's Engram Sinkhorn references
// (tk21_ops.md §5.4): the momentum update's FMAs and in-place buffer, a step
// against its definition, the partials' fixed-order reduction, the final
// matrix's rows of norm alpha, and the argument messages.
#include "engram/reference.h"

#include "common/convert.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

using tilejit::DType;
using tilejit::ref::HostTensor;
using namespace tilejit::engram;

namespace {

HostTensor f32(std::vector<int64_t> shape, const std::vector<float> &v) {
  return HostTensor::from<float>(DType::f32, shape, v);
}

std::vector<float> randn(size_t n, unsigned seed, float shift = 0) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0, 1);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen) + shift;
  return v;
}

} // namespace

TEST_CASE("engram_sinkhorn_momentum_update uses the kernel's FMAs and "
          "updates the buffer in place",
          "[ref][engram]") {
  const std::vector<float> g = randn(256, 1), m = randn(256, 2);
  HostTensor grad = f32({2, 128}, g), buf = f32({2, 128}, m);
  const double beta = 0.9;
  HostTensor out = engram_sinkhorn_momentum_update_ref(grad, buf, beta, true);
  const float c0 = 0.9f, c1 = static_cast<float>(1.0 - 0.9);
  for (int i : {0, 77, 255}) {
    const float m32 = std::fma(m[i], c0, c1 * g[i]);
    CHECK(buf.data<float>()[i] == m32);
    CHECK(out.data<float>()[i] == std::fma(g[i], c1, c0 * m32));
  }
  // Without Nesterov the result is the new momentum; a bf16 buffer keeps
  // its rounding while the result uses the unrounded value.
  std::vector<uint16_t> bits(256);
  for (size_t i = 0; i < 256; ++i)
    bits[i] = tilejit::ref::f32_to_bf16(m[i]);
  HostTensor b =
      HostTensor::from<uint16_t>(DType::bf16, std::vector<int64_t>{256}, bits);
  HostTensor plain =
      engram_sinkhorn_momentum_update_ref(f32({256}, g), b, beta, false);
  const float mb = tilejit::ref::bf16_to_f32(bits[5]);
  const float m32 = std::fma(mb, c0, c1 * g[5]);
  CHECK(plain.data<float>()[5] == m32);
  CHECK(b.data<uint16_t>()[5] == tilejit::ref::f32_to_bf16(m32));
}

TEST_CASE("engram_sinkhorn_step normalises rows and sums each block's "
          "columns; step_reduce adds the partials in order",
          "[ref][engram]") {
  const int64_t rows = 5, cols = 256;
  const std::vector<float> mv = randn(rows * cols, 3);
  HostTensor matrix = f32({rows, cols}, mv);
  HostTensor rs = f32({rows}, {1, 2, 0.5f, 1, 3});
  HostTensor cs = f32({cols}, randn(cols, 4, 2.0f));
  const std::vector<float> rs0(rs.data<float>(), rs.data<float>() + rows);
  const float eps = 1e-6f;
  // 3 blocks: rows {0, 1}, {2, 3}, {4}.
  EngramSinkhornStepResult r = engram_sinkhorn_step_ref(matrix, rs, cs, eps, 3);
  for (int64_t row = 0; row < rows; ++row) {
    double sum = 0;
    for (int64_t c = 0; c < cols; ++c) {
      const double x = (rs0[row] * mv[row * cols + c]) * cs.data<float>()[c];
      sum += x * x;
    }
    CHECK(r.row_norm.data<float>()[row] ==
          Approx(std::sqrt(sum)).epsilon(1e-6));
    CHECK(rs.data<float>()[row] ==
          rs0[row] * (1.0f / (r.row_norm.data<float>()[row] + eps)));
  }
  // Each normalised row has norm 1 (to eps): a block's partial sums to its
  // row count.
  for (int64_t p = 0; p < 3; ++p) {
    double total = 0;
    for (int64_t c = 0; c < cols; ++c)
      total += r.col_sumsq_partial.data<float>()[p * cols + c];
    CHECK(total == Approx(p < 2 ? 2.0 : 1.0).epsilon(1e-4));
  }
  HostTensor col = HostTensor::zeros(DType::f32, {cols});
  engram_sinkhorn_step_reduce_ref(r.col_sumsq_partial, col);
  const float *part = r.col_sumsq_partial.data<float>();
  CHECK(col.data<float>()[9] ==
        ((0.0f + part[9]) + part[cols + 9]) + part[2 * cols + 9]);
  // More blocks than rows: the extra partial rows are zero.
  HostTensor rs2 = f32({rows}, rs0);
  EngramSinkhornStepResult wide =
      engram_sinkhorn_step_ref(matrix, rs2, cs, eps, 8);
  CHECK(wide.col_sumsq_partial.data<float>()[7 * cols] == 0.0f);
}

TEST_CASE("engram_sinkhorn_finalize scales each row to norm alpha",
          "[ref][engram]") {
  const int64_t rows = 3, cols = 256;
  HostTensor matrix = f32({rows, cols}, randn(rows * cols, 5));
  HostTensor rs = f32({rows}, {1, 0.25f, 4});
  HostTensor cs = f32({cols}, randn(cols, 6, 1.0f));
  HostTensor out = engram_sinkhorn_finalize_ref(matrix, rs, cs, 0.0f, 2.5f);
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t c = 0; c < cols; ++c)
      sum += std::pow(out.data<float>()[r * cols + c], 2);
    CHECK(std::sqrt(sum) == Approx(2.5).epsilon(1e-5));
  }
}

TEST_CASE("the Engram Sinkhorn references name every bad argument",
          "[ref][engram]") {
  HostTensor m = HostTensor::zeros(DType::f32, {2, 128});
  HostTensor rs = HostTensor::zeros(DType::f32, {2});
  HostTensor cs = HostTensor::zeros(DType::f32, {128});
  CHECK_THROWS_WITH(engram_sinkhorn_step_ref(m, rs, cs, 0.0f),
                    "engram_sinkhorn_step_ref: argument 'matrix' has shape "
                    "[2, 128]; requires Dh a multiple of 256");
  HostTensor m2 = HostTensor::zeros(DType::f32, {2, 256});
  CHECK_THROWS_WITH(engram_sinkhorn_finalize_ref(m2, rs, cs, 0.0f, 1.0f),
                    "engram_sinkhorn_finalize_ref: argument 'col_scale' has "
                    "shape [128]; requires [Dh] = [256]");
  CHECK_THROWS_WITH(engram_sinkhorn_step_ref(
                        m2, rs, HostTensor::zeros(DType::f32, {256}), 0.0f, 0),
                    "engram_sinkhorn_step_ref: argument 'num_partials' is 0; "
                    "requires >= 1 (3 x the SMs in TileKernels)");
  CHECK_THROWS_WITH(
      engram_sinkhorn_momentum_update_ref(HostTensor::zeros(DType::f32, {100}),
                                          HostTensor::zeros(DType::f32, {100}),
                                          0.9),
      "engram_sinkhorn_momentum_update_ref: arguments 'grad' and "
      "'momentum_buffer' have shapes [100] and [100]; requires one shape of a "
      "multiple of 256 elements");
  CHECK_THROWS_WITH(
      engram_sinkhorn_momentum_update_ref(HostTensor::zeros(DType::f16, {256}),
                                          HostTensor::zeros(DType::f32, {256}),
                                          0.9),
      "engram_sinkhorn_momentum_update_ref: argument 'grad' has dtype f16; "
      "requires bf16 or f32");
  CHECK_THROWS_WITH(
      engram_sinkhorn_step_reduce_ref(HostTensor::zeros(DType::f32, {3, 256}),
                                      HostTensor::zeros(DType::f32, {255})),
      "engram_sinkhorn_step_reduce_ref: argument 'col_sumsq' has "
      "shape [255]; requires [Dh] = [256]");
}
