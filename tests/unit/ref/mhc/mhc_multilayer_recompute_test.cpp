// mhc_multilayer_recompute_test.cpp - Tests of the mhc_multilayer_recompute
// reference (spec §3.9): bit-identical to chaining apply_mix and post for
// P = L - 1 and P = L; edges and list errors.
#include "mhc/reference.h"
#include "mhc_test_util.h"

using namespace mhc_test;
using namespace tilejit::mhc;

namespace {

struct Stack {
  HostTensor initial;
  std::vector<HostTensor> pre, outputs, post, comb, inputs, residuals;
};

Stack make_stack(int64_t n, int mhc, int64_t hid, int layers, int posts,
                 uint32_t seed) {
  Stack s;
  s.initial = bf16({n, mhc, hid}, randn(n * mhc * hid, seed++));
  for (int l = 0; l < layers; ++l) {
    s.pre.push_back(f32({n, mhc, 1}, randn(n * mhc, seed++)));
    s.inputs.push_back(HostTensor::zeros(DType::bf16, {n, hid}));
  }
  for (int l = 0; l < posts; ++l) {
    s.outputs.push_back(bf16({n, hid}, randn(n * hid, seed++)));
    s.post.push_back(f32({n, mhc, 1}, randn(n * mhc, seed++)));
    s.comb.push_back(f32({n, mhc, mhc}, randn(n * mhc * mhc, seed++, 0.5)));
    s.residuals.push_back(HostTensor::zeros(DType::bf16, {n, mhc, hid}));
  }
  return s;
}

void recompute(const Stack &s) {
  mhc_multilayer_recompute_ref(s.initial, s.pre, s.outputs, s.post, s.comb,
                               s.inputs, s.residuals);
}

} // namespace

TEST_CASE("mhc_multilayer_recompute equals chaining apply_mix and post",
          "[ref][mhc]") {
  uint32_t seed = 400;
  for (auto [layers, posts] :
       {std::pair{1, 0}, std::pair{1, 1}, std::pair{3, 2}, std::pair{3, 3},
        std::pair{10, 9}, std::pair{10, 10}})
    for (int64_t hid : {1, 7, 64})
      for (int64_t n : {0, 1, 3}) {
        Stack s = make_stack(n, 4, hid, layers, posts, seed += 50);
        recompute(s);
        HostTensor r = s.initial;
        for (int l = 0; l < layers; ++l) {
          INFO("L " << layers << " P " << posts << " H " << hid << " n " << n
                    << " layer " << l);
          CHECK(compare_exact(s.inputs[l],
                              mhc_pre_apply_mix_ref(r, s.pre[l])) == "");
          if (l == posts)
            break;
          r = mhc_post_ref(s.outputs[l], r, s.post[l], s.comb[l]);
          CHECK(compare_exact(s.residuals[l], r) == "");
        }
      }
}

TEST_CASE("mhc_multilayer_recompute re-rounds the residual between layers",
          "[ref][mhc]") {
  // One stream, H 1: layer 0 makes 1 + 2^-9 (bf16 -> 1), layer 1 doubles
  // the residual and subtracts 2. Without re-rounding it would be 2^-8.
  Stack s = make_stack(1, 1, 1, 2, 2, 1);
  s.initial = bf16({1, 1, 1}, {1});
  s.outputs[0] = bf16({1, 1}, {std::ldexp(1.0, -9)});
  s.post[0] = f32({1, 1, 1}, {1});
  s.comb[0] = f32({1, 1, 1}, {1});
  s.outputs[1] = bf16({1, 1}, {-2});
  s.post[1] = f32({1, 1, 1}, {1});
  s.comb[1] = f32({1, 1, 1}, {2});
  s.pre[1] = f32({1, 1, 1}, {1});
  recompute(s);
  CHECK(values(s.residuals[0]) == Vec{1});
  CHECK(values(s.inputs[1]) == Vec{1});
  CHECK(values(s.residuals[1]) == Vec{0});
}

TEST_CASE("mhc_multilayer_recompute rejects bad lists", "[ref][mhc]") {
  Stack s = make_stack(2, 4, 8, 3, 2, 500);
  // No layers.
  CHECK_USER_ERROR(
      mhc_multilayer_recompute_ref(s.initial, {}, {}, {}, {}, {}, {}),
      "mhc_multilayer_recompute_ref: argument 'pre_mix_list' is a "
      "list of 0 tensors; requires L >= 1 tensors");
  // P = L - 2.
  std::vector<HostTensor> one_output(s.outputs.begin(), s.outputs.begin() + 1);
  CHECK_USER_ERROR(
      mhc_multilayer_recompute_ref(s.initial, s.pre, one_output, s.post, s.comb,
                                   s.inputs, s.residuals),
      "mhc_multilayer_recompute_ref: argument 'layer_output_list' is a list "
      "of 1 tensors; requires L - 1 or L tensors (L = 3)");
  // One comb too few.
  std::vector<HostTensor> one_comb(s.comb.begin(), s.comb.begin() + 1);
  CHECK_USER_ERROR(
      mhc_multilayer_recompute_ref(s.initial, s.pre, s.outputs, s.post,
                                   one_comb, s.inputs, s.residuals),
      "mhc_multilayer_recompute_ref: argument 'comb_mix_list' is a list of 1 "
      "tensors; requires P = 2 tensors (P = len(layer_output_list))");
  // Layer inputs must be one per layer.
  CHECK_USER_ERROR(
      mhc_multilayer_recompute_ref(s.initial, s.pre, s.outputs, s.post, s.comb,
                                   s.residuals, s.residuals),
      "mhc_multilayer_recompute_ref: argument 'layer_input_list' is a list of "
      "2 tensors; requires L = 3 tensors (L = len(pre_mix_list))");
  // An f32 layer input.
  std::vector<HostTensor> inputs = s.inputs;
  inputs[1] = HostTensor::zeros(DType::f32, {2, 8});
  CHECK_USER_ERROR(
      mhc_multilayer_recompute_ref(s.initial, s.pre, s.outputs, s.post, s.comb,
                                   inputs, s.residuals),
      "mhc_multilayer_recompute_ref: argument 'layer_input_list[1]' has dtype "
      "f32; requires bf16");
  // A post mix of the wrong shape.
  std::vector<HostTensor> post = s.post;
  post[0] = HostTensor::zeros(DType::f32, {2, 4});
  CHECK_USER_ERROR(
      mhc_multilayer_recompute_ref(s.initial, s.pre, s.outputs, post, s.comb,
                                   s.inputs, s.residuals),
      "mhc_multilayer_recompute_ref: argument 'post_mix_list[0]' has shape "
      "[2, 4]; requires [2, 4, 1]");
}
