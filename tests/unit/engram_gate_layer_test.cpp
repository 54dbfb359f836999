// engram_gate_layer_test.cpp - The Engram gate layer's C++ API refuses
// mistakes before any launch, with the message of the layer or of the op
// that would take the argument (no GPU needed: nothing launches).
#include "modeling/engram_gate.h"

#include "op_test.h"

#include "tilejit/error.h"

#include <catch2/catch.hpp>

using namespace tilejit;
using harness::fake;

TEST_CASE("the Engram gate layer refuses mistakes before any launch",
          "[engram][modeling]") {
  const int64_t T = 8, hc = 4, D = 512;
  CUdeviceptr at = 0x100000;
  auto next = [&](DType dtype, std::vector<int64_t> shape) {
    at += 0x100000;
    return fake(dtype, std::move(shape), {}, at);
  };
  const rt::TensorView x = next(DType::bf16, {T, hc, D}),
                       k = next(DType::bf16, {T, hc, D}),
                       v = next(DType::bf16, {T, D}),
                       wh = next(DType::bf16, {hc, D}),
                       out = next(DType::bf16, {T, hc, D});
  const modeling::EngramGateSavedViews saved{
      next(DType::f32, {hc, D}), next(DType::f32, {T, hc}),
      next(DType::f32, {T, hc}), next(DType::f32, {T, hc}),
      next(DType::f32, {T, hc})};
  // Deliberate mistake: the output over x, which the backward reads.
  CHECK_THROWS_WITH(
      modeling::engram_gate_forward(x, k, v, wh, next(DType::bf16, {hc, D}), x,
                                    saved, 1e-6f, 1e-20f, nullptr),
      "engram_gate_forward: argument 'out' is 'x'; requires another buffer "
      "(the backward reads x)");
  // Deliberate mistake: weight_embed of another hidden size, refused by
  // fused_weight before either op launches.
  CHECK_THROWS_WITH(
      modeling::engram_gate_forward(x, k, v, wh, next(DType::bf16, {hc, 2 * D}),
                                    out, saved, 1e-6f, 1e-20f, nullptr),
      "fused_weight: argument 'weight_embed' has shape [4, 1024]; requires "
      "[hc, D] = [4, 512]");
  // Deliberate mistake: partial rows not a multiple of 4, refused by
  // grad_w_reduce before engram_gate_bwd launches.
  CHECK_THROWS_WITH(
      modeling::engram_gate_backward(
          next(DType::bf16, {T, hc, D}), x, k, v, wh,
          next(DType::bf16, {hc, D}), saved, next(DType::bf16, {T, hc, D}),
          next(DType::bf16, {T, hc, D}), next(DType::bf16, {T, D}),
          next(DType::f32, {6, hc, D}), next(DType::f32, {hc, D}),
          next(DType::f32, {hc, D}), 1e-6f, nullptr),
      "grad_w_reduce: argument 'grad_w_partial' has shape [6, 4, 512] (B = "
      "6); requires B a multiple of 4");
}
