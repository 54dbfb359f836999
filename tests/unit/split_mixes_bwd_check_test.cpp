// split_mixes_bwd_check_test.cpp - mhc_pre_split_mixes_bwd's case table
// bounds the scale's gradient by TileKernels' rtol 1e-5 / atol 2e-5 plus
// the sum's rounding scale: at 16 streams and 1 x 333 tokens, seed 2026
// (the case test_ops_gpu.py prepared), the H100 gave -10.959114 for
// element 2 against the float64 reference's -10.959258, a sum of 85,000
// products cancelled from partial sums of hundreds. That value passes,
// TileKernels' elementwise bound alone would not, and an error of 0.01 or
// a part's terms left out is still caught.
#include "op_test.h"
#include "run.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace tilejit;

TEST_CASE("mhc_pre_split_mixes_bwd's scale-gradient compare allows the sum's "
          "rounding and catches an error",
          "[kernels]") {
  const ops::OpDef &op = *ops::find_op("mhc_pre_split_mixes_bwd");
  const harness::Case c{.label = "",
                        .shape = {1, 333, 16},
                        .set = {{"mhc_post_mult_value", "2"}}};
  const harness::Prepared p =
      harness::Prepared::make(harness::resolve(op, c), 2026);
  const std::vector<ref::HostTensor> &want = p.data().expected;
  REQUIRE(want.size() == 3); // input_mixes_grad, mhc_scale_grad, base_grad
  // The data of the GPU run (the reference's value, as it printed).
  CHECK(std::fabs(want[1].at<float>({2}) - -10.959258f) < 1e-5f);
  // The compare itself (Prepared::check would run the reference's expf on
  // a GPU).
  const harness::Compare &scale = harness::find_test("mhc_pre_split_mixes_bwd")
                                      ->compare.at("mhc_scale_grad");
  auto verdict = [&](int64_t i, float v) {
    ref::HostTensor got = want[1].clone();
    got.at<float>({i}) = v;
    return scale.fn(got, want[1], p.data());
  };
  const float ref2 = want[1].at<float>({2});
  CHECK(verdict(2, ref2) == "");
  const float gpu = -10.959114f; // H100, session 57
  CHECK(verdict(2, gpu) == "");
  CHECK_FALSE(std::fabs(gpu - ref2) <= 2e-5 + 1e-5 * std::fabs(ref2));
  CHECK_THAT(verdict(2, ref2 + 0.01f), Catch::Matchers::StartsWith("[2]: "));
  // The pre part's sum without its terms (the scale's element 0 as 0).
  CHECK(std::fabs(want[1].at<float>({0})) > 0.1f);
  CHECK_THAT(verdict(0, 0.0f), Catch::Matchers::StartsWith("[0]: "));
}
