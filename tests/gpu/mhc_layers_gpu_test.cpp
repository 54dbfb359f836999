// mhc_layers_gpu_test.cpp - mHC's pre and head layers (modeling/mhc_pre.h,
// mhc_head.h) on the GPU against their CPU references (modeling/
// mhc_reference.h), with and without a norm weight: the outputs, then the
// gradients with the residual's added into a buffer that holds mhc_post's
// (the gradient-sharing protocol), within calc_diff bounds (the GPU sums
// the norm's product in 16 parts and in f32; the reference in one, in
// float64).
#include "modeling/mhc_head.h"
#include "modeling/mhc_pre.h"
#include "modeling/mhc_reference.h"

#include "device_tensors.h"
#include "host_random.h"

#include "common/host_tensor.h"

#include "tilejit/runtime/stream.h"

#include <catch2/catch.hpp>

#include <random>

using namespace tilejit;
using gpu_test::Device;
using gpu_test::randn;
using ref::HostTensor;

namespace {

/// `t` with every element times `s` plus `b` (f32).
HostTensor affine(HostTensor t, float s, float b) {
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data<float>()[i] = t.data<float>()[i] * s + b;
  return t;
}

/// A layer's inputs for T tokens of mhc streams of H: the residual, fn of
/// `rows` rows (~1e-4), `scales` scales and `rows` biases (~0.1), and a norm
/// weight (~1), with their device copies (the weight's absent unless
/// `weighted`).
struct Inputs {
  HostTensor residual, fn, scale, base, normw;
  rt::TensorView dres, dfn, dscale, dbase, dw;
  Inputs(Device &dev, std::mt19937_64 &gen, int64_t t, int64_t mhc, int64_t h,
         int64_t rows, int64_t scales, bool weighted)
      : residual(randn(DType::bf16, {t, mhc, h}, gen)),
        fn(affine(randn(DType::f32, {rows, mhc * h}, gen), 1e-4f, 0)),
        scale(affine(randn(DType::f32, {scales}, gen), 0.1f, 0)),
        base(affine(randn(DType::f32, {rows}, gen), 0.1f, 0)),
        normw(affine(randn(DType::f32, {mhc * h}, gen), 0.1f, 1)),
        dres(dev.put(residual)), dfn(dev.put(fn)), dscale(dev.put(scale)),
        dbase(dev.put(base)), dw(weighted ? dev.put(normw) : ops::absent()) {}
};

/// A device tensor of zeros.
rt::TensorView zeros(Device &dev, DType dtype,
                     std::initializer_list<int64_t> shape) {
  return dev.put(HostTensor::zeros(dtype, shape));
}

} // namespace

TEST_CASE("mHC's pre layer forward and backward on the GPU match its CPU "
          "reference",
          "[mhc][modeling]") {
  const int64_t T = 301, mhc = 4, H = 1280, M3 = 24, Kd = mhc * H;
  std::mt19937_64 gen(Catch::rngSeed());
  for (bool weighted : {false, true}) {
    INFO("norm weight " << weighted);
    Device dev;
    const Inputs in(dev, gen, T, mhc, H, M3, 3, weighted);
    modeling::MhcPreKwargs kwargs;
    if (weighted)
      kwargs.norm_weight = in.normw;
    modeling::MhcPreOutput want =
        modeling::mhc_pre_ref(in.residual, in.fn, in.scale, in.base, kwargs);
    auto zeros = [&](DType dtype, std::initializer_list<int64_t> shape) {
      return ::zeros(dev, dtype, shape);
    };
    const rt::TensorView &dres = in.dres, &dfn = in.dfn, &dscale = in.dscale,
                         &dbase = in.dbase, &dw = in.dw;
    const HostTensor &residual = in.residual;
    const rt::TensorView li = zeros(DType::bf16, {T, H}),
                         post = zeros(DType::f32, {T, mhc, 1}),
                         comb = zeros(DType::f32, {T, mhc, mhc});
    const modeling::MhcPreSaved saved{weighted ? zeros(DType::f32, {M3, Kd})
                                               : ops::absent(),
                                      zeros(DType::f32, {16, T, M3}),
                                      zeros(DType::f32, {16, T}),
                                      zeros(DType::f32, {T, M3}),
                                      zeros(DType::f32, {T}),
                                      zeros(DType::f32, {T, M3}),
                                      zeros(DType::f32, {T, mhc, 1}),
                                      zeros(DType::f32, {T, mhc, mhc})};
    modeling::mhc_pre_forward(dres, dfn, dscale, dbase, dw, li, post, comb,
                              saved, {}, nullptr);
    rt::synchronize(nullptr);
    CHECK(ref::calc_diff(dev.get(li, want.layer_input), want.layer_input) <
          1e-5);
    CHECK(ref::calc_diff(dev.get(post, want.post_mix), want.post_mix) < 1e-9);
    CHECK(ref::calc_diff(dev.get(comb, want.comb_mix), want.comb_mix) < 1e-9);

    // The backward, the residual's gradient added to mhc_post's.
    HostTensor li_grad = randn(DType::bf16, {T, H}, gen);
    HostTensor post_grad = randn(DType::f32, {T, mhc, 1}, gen);
    HostTensor comb_grad = randn(DType::f32, {T, mhc, mhc}, gen);
    HostTensor from_post = randn(DType::bf16, {T, mhc, H}, gen);
    HostTensor buffer = from_post.clone();
    modeling::MhcResidualGradRegistry registry;
    registry.install(residual, buffer);
    modeling::MhcPreGrads grads = modeling::mhc_pre_bwd_ref(
        *want.ctx, li_grad, post_grad, comb_grad, registry);
    const rt::TensorView dgrad = dev.put(from_post),
                         fn_grad = zeros(DType::f32, {M3, Kd}),
                         nw_grad =
                             weighted ? zeros(DType::f32, {Kd}) : ops::absent(),
                         scale_grad = zeros(DType::f32, {3}),
                         base_grad = zeros(DType::f32, {M3});
    const modeling::MhcPreBackwardScratch scratch{
        zeros(DType::f32, {T, mhc, 1}),
        zeros(DType::f32, {T, mhc, mhc}),
        zeros(DType::f32, {T, M3}),
        zeros(DType::f32, {T, M3}),
        zeros(DType::f32, {T}),
        weighted ? zeros(DType::f32, {M3, Kd}) : ops::absent()};
    modeling::mhc_pre_backward(dres, dfn, dscale, dbase, dw, post, saved,
                               dev.put(li_grad), dev.put(post_grad),
                               dev.put(comb_grad), dgrad, fn_grad, nw_grad,
                               scale_grad, base_grad, scratch, {}, nullptr);
    rt::synchronize(nullptr);
    CHECK(ref::calc_diff(dev.get(dgrad, buffer), buffer) < 1e-5);
    CHECK(ref::calc_diff(dev.get(fn_grad, grads.fn_grad), grads.fn_grad) <
          1e-5);
    CHECK(ref::calc_diff(dev.get(scale_grad, grads.scale_grad),
                         grads.scale_grad) < 1e-6);
    CHECK(ref::calc_diff(dev.get(base_grad, grads.base_grad), grads.base_grad) <
          1e-6);
    if (weighted)
      CHECK(ref::calc_diff(dev.get(nw_grad, *grads.norm_weight_grad),
                           *grads.norm_weight_grad) < 1e-5);
  }
}

TEST_CASE("mHC's head layer forward and backward on the GPU match its CPU "
          "reference",
          "[mhc][modeling]") {
  const int64_t T = 301, mhc = 4, H = 1280, Kd = mhc * H, B = 132;
  std::mt19937_64 gen(Catch::rngSeed());
  for (bool weighted : {false, true}) {
    INFO("norm weight " << weighted);
    Device dev;
    const Inputs in(dev, gen, T, mhc, H, mhc, 1, weighted);
    modeling::MhcHeadKwargs kwargs;
    if (weighted)
      kwargs.norm_weight = in.normw;
    modeling::MhcHeadOutput want =
        modeling::mhc_head_ref(in.residual, in.fn, in.scale, in.base, kwargs);
    auto zeros = [&](DType dtype, std::initializer_list<int64_t> shape) {
      return ::zeros(dev, dtype, shape);
    };
    const rt::TensorView &dres = in.dres, &dfn = in.dfn, &dscale = in.dscale,
                         &dbase = in.dbase, &dw = in.dw;
    const HostTensor &residual = in.residual;
    const rt::TensorView out = zeros(DType::bf16, {T, H});
    const modeling::MhcHeadSaved saved{weighted ? zeros(DType::f32, {mhc, Kd})
                                                : ops::absent(),
                                       zeros(DType::f32, {16, T, mhc}),
                                       zeros(DType::f32, {16, T}),
                                       zeros(DType::f32, {T, mhc}),
                                       zeros(DType::f32, {T}),
                                       zeros(DType::f32, {T, mhc}),
                                       zeros(DType::f32, {T, mhc, 1})};
    modeling::mhc_head_forward(dres, dfn, dscale, dbase, dw, out, saved, {},
                               nullptr);
    rt::synchronize(nullptr);
    CHECK(ref::calc_diff(dev.get(out, want.out), want.out) < 1e-5);

    HostTensor out_grad = randn(DType::bf16, {T, H}, gen);
    HostTensor from_post = randn(DType::bf16, {T, mhc, H}, gen);
    HostTensor buffer = from_post.clone();
    modeling::MhcResidualGradRegistry registry;
    registry.install(residual, buffer);
    modeling::MhcHeadGrads grads =
        modeling::mhc_head_bwd_ref(want.ctx, out_grad, registry);
    const rt::TensorView dgrad = dev.put(from_post),
                         fn_grad = zeros(DType::f32, {mhc, Kd}),
                         nw_grad =
                             weighted ? zeros(DType::f32, {Kd}) : ops::absent(),
                         scale_part = zeros(DType::f32, {B, 1}),
                         base_part = zeros(DType::f32, {B, mhc});
    const modeling::MhcHeadBackwardScratch scratch{
        zeros(DType::f32, {T, mhc, 1}), zeros(DType::f32, {T, mhc}),
        zeros(DType::f32, {T, mhc}), zeros(DType::f32, {T}),
        weighted ? zeros(DType::f32, {mhc, Kd}) : ops::absent()};
    modeling::mhc_head_backward(dres, dfn, dscale, dbase, dw, saved,
                                dev.put(out_grad), dgrad, fn_grad, nw_grad,
                                scale_part, base_part, scratch, {}, nullptr);
    rt::synchronize(nullptr);
    CHECK(ref::calc_diff(dev.get(dgrad, buffer), buffer) < 1e-5);
    CHECK(ref::calc_diff(dev.get(fn_grad, grads.fn_grad), grads.fn_grad) <
          1e-5);
    // The partial rows summed: the scale's and the base's gradients.
    const HostTensor sp =
        dev.get(scale_part, HostTensor::zeros(DType::f32, {B, 1}));
    const HostTensor bp =
        dev.get(base_part, HostTensor::zeros(DType::f32, {B, mhc}));
    HostTensor scale_sum = HostTensor::zeros(DType::f32, {1});
    HostTensor base_sum = HostTensor::zeros(DType::f32, {mhc});
    for (int64_t b = 0; b < B; ++b) {
      scale_sum.data<float>()[0] += sp.data<float>()[b];
      for (int64_t m = 0; m < mhc; ++m)
        base_sum.data<float>()[m] += bp.data<float>()[b * mhc + m];
    }
    CHECK(ref::calc_diff(scale_sum, grads.scale_grad.reinterpret(
                                        DType::f32, std::vector<int64_t>{1})) <
          1e-6);
    CHECK(ref::calc_diff(base_sum, grads.base_grad) < 1e-6);
    if (weighted)
      CHECK(ref::calc_diff(dev.get(nw_grad, *grads.norm_weight_grad),
                           *grads.norm_weight_grad) < 1e-5);
  }
}
