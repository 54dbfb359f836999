// engram_gate_layer_gpu_test.cpp - The Engram gate layer's C++ API
// (modeling/engram_gate.h) on the GPU against its CPU reference
// (modeling/engram_gate_reference.h): the forward's output and saved
// values, and the backward's gradients with the weights' gradients added
// into main_grad buffers, within TileKernels' calc_diff bounds.
#include "modeling/engram_gate.h"
#include "modeling/engram_gate_reference.h"

#include "device_tensors.h"
#include "host_random.h"

#include "common/host_tensor.h"

#include "tilejit/runtime/stream.h"

#include <catch2/catch.hpp>

#include <random>
#include <vector>

using namespace tilejit;
using ref::HostTensor;

using gpu_test::Device;

TEST_CASE("the Engram gate layer's forward and backward on the GPU match "
          "its CPU reference",
          "[engram][modeling]") {
  const int64_t T = 301, hc = 4, D = 1024, B = 16;
  const float clamp = 1e-6f, eps = 1e-20f;
  std::mt19937_64 gen(Catch::rngSeed());
  HostTensor x = gpu_test::randn(DType::bf16, {T, hc, D}, gen);
  HostTensor k = gpu_test::randn(DType::bf16, {T, hc, D}, gen);
  HostTensor v = gpu_test::randn(DType::bf16, {T, D}, gen);
  HostTensor wh = gpu_test::randn(DType::bf16, {hc, D}, gen);
  HostTensor we = gpu_test::randn(DType::bf16, {hc, D}, gen);
  HostTensor grad_out = gpu_test::randn(DType::bf16, {T, hc, D}, gen);
  modeling::EngramGateOutput want =
      modeling::engram_gate_ref(x, k, v, wh, we, clamp, eps);
  HostTensor main_h = HostTensor::zeros(DType::f32, {hc, D});
  HostTensor main_e = HostTensor::zeros(DType::f32, {hc, D});
  modeling::EngramGateGrads want_grads = modeling::engram_gate_backward_ref(
      want.saved, grad_out, main_h, main_e, B);

  Device dev;
  const rt::TensorView dx = dev.put(x), dk = dev.put(k), dv = dev.put(v),
                       dwh = dev.put(wh), dwe = dev.put(we);
  const HostTensor out0 = HostTensor::zeros(DType::bf16, {T, hc, D});
  const HostTensor per_head = HostTensor::zeros(DType::f32, {T, hc});
  const HostTensor weights = HostTensor::zeros(DType::f32, {hc, D});
  const rt::TensorView dout = dev.put(out0);
  const modeling::EngramGateSavedViews saved{
      dev.put(weights), dev.put(per_head), dev.put(per_head), dev.put(per_head),
      dev.put(per_head)};
  modeling::engram_gate_forward(dx, dk, dv, dwh, dwe, dout, saved, clamp, eps,
                                nullptr);
  rt::synchronize(nullptr);
  CHECK(ref::calc_diff(dev.get(dout, out0), want.out) < 2e-10);
  CHECK(ref::calc_diff(dev.get(saved.dot, per_head), want.saved.dot) < 2e-10);
  CHECK(ref::calc_diff(dev.get(saved.gate_score, per_head),
                       want.saved.gate_score) < 2e-10);

  // The backward reads the reference's saved values, as TileKernels' test
  // feeds its reference's forward: dL/dz goes as |dot|^-1/2, so a dot near
  // 0 summed in another order would move a gradient by more than the bound.
  dev.set(saved.weight_fused, want.saved.weight_fused);
  dev.set(saved.dot, want.saved.dot);
  dev.set(saved.gate_score, want.saved.gate_score);
  dev.set(saved.rstd_x, want.saved.rstd_x);
  dev.set(saved.rstd_k, want.saved.rstd_k);

  const rt::TensorView dgo = dev.put(grad_out), gx = dev.put(out0),
                       gk = dev.put(out0),
                       gv = dev.put(HostTensor::zeros(DType::bf16, {T, D})),
                       gw = dev.put(HostTensor::zeros(DType::f32, {B, hc, D})),
                       gwh = dev.put(weights), gwe = dev.put(weights);
  modeling::engram_gate_backward(dgo, dx, dk, dv, dwh, dwe, saved, gx, gk, gv,
                                 gw, gwh, gwe, clamp, nullptr);
  rt::synchronize(nullptr);
  CHECK(ref::calc_diff(dev.get(gx, out0), want_grads.grad_hidden_states) <
        1e-8);
  CHECK(ref::calc_diff(dev.get(gk, out0), want_grads.grad_k) < 1e-8);
  CHECK(ref::calc_diff(dev.get(gv, want_grads.grad_v), want_grads.grad_v) <
        1e-8);
  CHECK(ref::calc_diff(dev.get(gwh, weights), main_h) < 1e-8);
  CHECK(ref::calc_diff(dev.get(gwe, weights), main_e) < 1e-8);
}
