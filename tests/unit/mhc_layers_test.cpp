// mhc_layers_test.cpp - mHC's pre and head layers (modeling/mhc_pre.h,
// mhc_head.h) bind every op call before the first launches: a mistake in
// the last call's tensors is refused with that op's message, which shows
// that every call before it bound (no GPU needed: nothing launches).
#include "modeling/mhc_head.h"
#include "modeling/mhc_pre.h"

#include "op_test.h"

#include "tilejit/error.h"

#include <catch2/catch.hpp>

using namespace tilejit;
using harness::fake;

namespace {

struct Layer {
  static constexpr int64_t T = 64, mhc = 4, H = 256, M3 = 24, Kd = 1024, S = 16;
  CUdeviceptr at = 0x100000;
  rt::TensorView next(DType dtype, std::vector<int64_t> shape) {
    at += 0x1000000;
    return fake(dtype, std::move(shape), {}, at);
  }
  rt::TensorView f32(std::vector<int64_t> shape) {
    return next(DType::f32, std::move(shape));
  }
  rt::TensorView residual = next(DType::bf16, {T, mhc, H});
  rt::TensorView fn = f32({M3, Kd}), scale = f32({3}), base = f32({M3}),
                 norm_weight = f32({Kd});
  rt::TensorView post_mix = f32({T, mhc, 1}), comb_mix = f32({T, mhc, mhc});
  modeling::MhcPreSaved saved{f32({M3, Kd}),    f32({S, T, M3}),   f32({S, T}),
                              f32({T, M3}),     f32({T}),          f32({T, M3}),
                              f32({T, mhc, 1}), f32({T, mhc, mhc})};
  modeling::MhcPreBackwardScratch scratch{f32({T, mhc, 1}), f32({T, mhc, mhc}),
                                          f32({T, M3}),     f32({T, M3}),
                                          f32({T}),         f32({M3, Kd})};
};

} // namespace

TEST_CASE("mHC's pre layer binds all its op calls before any launch",
          "[mhc][modeling]") {
  Layer l;
  for (bool weighted : {false, true}) {
    INFO("norm weight " << weighted);
    const rt::TensorView w = weighted ? l.norm_weight : ops::absent();
    // The forward's last call, mhc_pre_apply_mix_fwd, takes layer_input.
    CHECK_THROWS_WITH(
        modeling::mhc_pre_forward(l.residual, l.fn, l.scale, l.base, w,
                                  l.next(DType::bf16, {Layer::T, 128}),
                                  l.post_mix, l.comb_mix, l.saved, {}, nullptr),
        "mhc_pre_apply_mix_fwd: argument 'o' has shape [64, 128]; requires "
        "[..., H] = [64, 256]");
    const rt::TensorView li_grad = l.next(DType::bf16, {Layer::T, Layer::H}),
                         residual_grad =
                             l.next(DType::bf16, {Layer::T, 4, Layer::H});
    // The backward's last call: the merge's (norm_weight_grad) with a norm
    // weight, else the norm's GEMM (fn_grad).
    const rt::TensorView fn_grad =
        weighted ? l.f32({Layer::M3, Layer::Kd}) : l.f32({Layer::M3, 512});
    const rt::TensorView nw_grad = l.f32({weighted ? 512 : Layer::Kd});
    CHECK_THROWS_WITH(
        modeling::mhc_pre_backward(
            l.residual, l.fn, l.scale, l.base, w, l.post_mix, l.saved, li_grad,
            l.f32({Layer::T, 4, 1}), l.f32({Layer::T, 4, 4}), residual_grad,
            fn_grad, nw_grad, l.f32({3}), l.f32({Layer::M3}), l.scratch, {},
            nullptr),
        weighted ? "mhc_fn_normw_merge_bwd: argument 'normw_grad' has shape "
                   "[512]; requires [K] = [1024]"
                 : "mhc_pre_norm_fn_gemm_bwd: argument 'fn_grad' has shape "
                   "[24, 512]; requires [M3, K] = [24, 1024]");
  }
}

TEST_CASE("mHC's pre layer refuses a residual that is not (T, mhc, H)",
          "[mhc][modeling]") {
  Layer l;
  CHECK_THROWS_WITH(
      modeling::mhc_pre_forward(l.next(DType::bf16, {2, 32, 4, 256}), l.fn,
                                l.scale, l.base, ops::absent(),
                                l.next(DType::bf16, {64, 256}), l.post_mix,
                                l.comb_mix, l.saved, {}, nullptr),
      "mhc_pre: argument 'residual' has rank 4; requires (T, mhc, H)");
}

TEST_CASE("mHC's head layer binds all its op calls before any launch",
          "[mhc][modeling]") {
  Layer l;
  const int64_t T = Layer::T, mhc = Layer::mhc, Kd = Layer::Kd;
  const rt::TensorView fn = l.f32({mhc, Kd}), scale = l.f32({1}),
                       base = l.f32({mhc});
  const modeling::MhcHeadSaved saved{
      l.f32({mhc, Kd}), l.f32({16, T, mhc}), l.f32({16, T}),    l.f32({T, mhc}),
      l.f32({T}),       l.f32({T, mhc}),     l.f32({T, mhc, 1})};
  const modeling::MhcHeadBackwardScratch scratch{
      l.f32({T, mhc, 1}), l.f32({T, mhc}), l.f32({T, mhc}), l.f32({T}),
      l.f32({mhc, Kd})};
  for (bool weighted : {false, true}) {
    INFO("norm weight " << weighted);
    const rt::TensorView w = weighted ? l.norm_weight : ops::absent();
    CHECK_THROWS_WITH(
        modeling::mhc_head_forward(l.residual, fn, scale, base, w,
                                   l.next(DType::bf16, {T, 128}), saved, {},
                                   nullptr),
        "mhc_pre_apply_mix_fwd: argument 'o' has shape [64, 128]; requires "
        "[..., H] = [64, 256]");
    const rt::TensorView fn_grad =
        weighted ? l.f32({mhc, Kd}) : l.f32({mhc, 512});
    CHECK_THROWS_WITH(
        modeling::mhc_head_backward(l.residual, fn, scale, base, w, saved,
                                    l.next(DType::bf16, {T, Layer::H}),
                                    l.next(DType::bf16, {T, mhc, Layer::H}),
                                    fn_grad, l.f32({weighted ? 512 : Kd}),
                                    l.f32({132, 1}), l.f32({132, mhc}), scratch,
                                    {}, nullptr),
        weighted ? "mhc_fn_normw_merge_bwd: argument 'normw_grad' has shape "
                   "[512]; requires [K] = [1024]"
                 : "mhc_pre_norm_fn_gemm_bwd: argument 'fn_grad' has shape "
                   "[4, 512]; requires [M3, K] = [4, 1024]");
  }
}
