// fused_weight_test.cpp - Tests of fused_weight_ref (spec §2.2) and
// grad_w_reduce_ref (§2.5): exact products, in-place accumulation, errors.
#include "engram/reference.h"
#include "engram_test_util.h"

#include "tilejit/error.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

using namespace tilejit::engram;
using namespace engram_test;

TEST_CASE("fused_weight: the exact fp32 product of the two bf16 weights",
          "[ref][engram]") {
  std::mt19937 rng(3);
  HostTensor wh = randn_bf16({4, 512}, rng), we = randn_bf16({4, 512}, rng, 3);
  HostTensor w = fused_weight_ref(wh, we);
  REQUIRE(w.dtype() == DType::f32);
  REQUIRE(w.shape() == std::vector<int64_t>{4, 512});
  std::vector<double> a = values(wh), b = values(we), got = values(w);
  for (size_t i = 0; i < got.size(); ++i)
    CHECK(got[i] == a[i] * b[i]); // 16 significant bits: exact in fp32

  // Hand values; and products outside fp32's range round like fp32 does.
  std::vector<double> h(256, 1.0), e(256, 1.0);
  h[0] = 1.5, e[0] = -2.25;        // -3.375
  h[1] = 0x1.fep127, e[1] = 2;     // bf16 max * 2 overflows to inf
  h[2] = 0x1p-133, e[2] = 0x1p-20; // 2^-153: below half of 2^-149 -> 0
  h[3] = -0x1p-126, e[3] = 0.5;    // -2^-127, an fp32 subnormal, exact
  HostTensor hw =
      fused_weight_ref(bf16_tensor({1, 256}, h), bf16_tensor({1, 256}, e));
  CHECK(hw.at<float>({0, 0}) == -3.375f);
  CHECK(hw.at<float>({0, 1}) == std::numeric_limits<float>::infinity());
  CHECK(hw.at<float>({0, 2}) == 0.0f);
  CHECK(hw.at<float>({0, 3}) == -0x1p-127f);
}

TEST_CASE("fused_weight: argument errors name the argument", "[ref][engram]") {
  std::mt19937 rng(4);
  HostTensor wh = randn_bf16({4, 256}, rng);
  // weight_embed in f32.
  CHECK_THROWS_WITH(fused_weight_ref(wh, randn_f32({4, 256}, rng)),
                    "fused_weight_ref: argument 'weight_embed' has dtype f32; "
                    "requires bf16");
  // One head fewer.
  CHECK_THROWS_WITH(fused_weight_ref(wh, randn_bf16({3, 256}, rng)),
                    "fused_weight_ref: argument 'weight_embed' has shape [3, "
                    "256]; requires [hc, D] = [4, 256]");
  // D = 128.
  CHECK_THROWS_WITH(
      fused_weight_ref(randn_bf16({4, 128}, rng), randn_bf16({4, 128}, rng)),
      "fused_weight_ref: argument 'weight_hidden' has hidden size D = 128; "
      "requires a positive multiple of 256");
}

TEST_CASE("grad_w_reduce: sums the blocks and accumulates in place",
          "[ref][engram]") {
  // Hand: rows 1, 2, 3, 4 sum to 10; we = 0.5, wh = -2; accumulators start
  // at 1 and 3: grad_wh = 1 + 10 * 0.5 = 6, grad_we = 3 + 10 * -2 = -17.
  const int64_t D = 512;
  std::vector<double> partial;
  for (int b = 1; b <= 4; ++b)
    partial.insert(partial.end(), D, b);
  HostTensor gwh = f32_tensor({1, D}, std::vector<double>(D, 1.0));
  HostTensor gwe = f32_tensor({1, D}, std::vector<double>(D, 3.0));
  grad_w_reduce_ref(f32_tensor({4, 1, D}, partial),
                    bf16_tensor({1, D}, std::vector<double>(D, -2.0)),
                    bf16_tensor({1, D}, std::vector<double>(D, 0.5)), gwh, gwe);
  CHECK(values(gwh) == std::vector<double>(D, 6.0));
  CHECK(values(gwe) == std::vector<double>(D, -17.0));

  // Random, against a float64 sum.
  std::mt19937 rng(8);
  const int64_t B = 132, hc = 4;
  HostTensor p = randn_f32({B, hc, D}, rng), wh = randn_bf16({hc, D}, rng),
             we = randn_bf16({hc, D}, rng);
  HostTensor ah = randn_f32({hc, D}, rng), ae = randn_f32({hc, D}, rng);
  std::vector<double> pv = values(p), whv = values(wh), wev = values(we),
                      want_h = values(ah), want_e = values(ae);
  for (int64_t i = 0; i < hc * D; ++i) {
    double sum = 0;
    for (int64_t b = 0; b < B; ++b)
      sum += pv[b * hc * D + i];
    want_h[i] += sum * wev[i];
    want_e[i] += sum * whv[i];
  }
  grad_w_reduce_ref(p, wh, we, ah, ae);
  check_close("grad_weight_hidden", values(ah), want_h, 1e-6, 1e-6);
  check_close("grad_weight_embed", values(ae), want_e, 1e-6, 1e-6);
}

TEST_CASE("grad_w_reduce: argument errors name the argument", "[ref][engram]") {
  std::mt19937 rng(4);
  HostTensor wh = randn_bf16({4, 512}, rng), we = randn_bf16({4, 512}, rng);
  HostTensor a = randn_f32({4, 512}, rng), b = randn_f32({4, 512}, rng);
  // 6 partial rows: the original loads them in 4 batches.
  CHECK_THROWS_WITH(
      grad_w_reduce_ref(randn_f32({6, 4, 512}, rng), wh, we, a, b),
      "grad_w_reduce_ref: argument 'grad_w_partial' has B = 6 rows; requires "
      "B % 4 == 0");
  // D = 256 is not a multiple of 512.
  CHECK_THROWS_WITH(
      grad_w_reduce_ref(randn_f32({4, 4, 256}, rng), wh, we, a, b),
      "grad_w_reduce_ref: argument 'grad_w_partial' has hidden size D = 256; "
      "requires a positive multiple of 512");
  // A bf16 accumulator.
  CHECK_THROWS_WITH(
      grad_w_reduce_ref(randn_f32({4, 4, 512}, rng), wh, we,
                        randn_bf16({4, 512}, rng), b),
      "grad_w_reduce_ref: argument 'grad_weight_hidden' has dtype bf16; "
      "requires f32");
  // weight_embed for 2 heads.
  CHECK_THROWS_WITH(
      grad_w_reduce_ref(randn_f32({4, 4, 512}, rng), wh,
                        randn_bf16({2, 512}, rng), a, b),
      "grad_w_reduce_ref: argument 'weight_embed' has shape [2, 512]; "
      "requires [hc, D] = [4, 512]");
}
