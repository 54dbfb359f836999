// scoring_test.cpp - Tests of the MoE scoring functions (spec §1.0).
#include "moe/reference.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using namespace tilejit::moe;

TEST_CASE("scoring functions parse case-insensitively", "[ref][moe]") {
  CHECK(parse_scoring_func("sigmoid") == ScoringFunc::sigmoid);
  CHECK(parse_scoring_func("SIGMOID") == ScoringFunc::sigmoid);
  CHECK(parse_scoring_func("SqrtSoftplus") == ScoringFunc::sqrtsoftplus);
  CHECK(parse_scoring_func("softMAX") == ScoringFunc::softmax);
  CHECK(parse_scoring_func("Identity") == ScoringFunc::identity);
  CHECK(static_cast<int>(ScoringFunc::sigmoid) == 0);
  CHECK(static_cast<int>(ScoringFunc::sqrtsoftplus) == 1);
  CHECK(static_cast<int>(ScoringFunc::softmax) == 2);
  CHECK(static_cast<int>(ScoringFunc::identity) == 3);
  CHECK_FALSE(parse_scoring_func("relu").has_value());
  CHECK_FALSE(parse_scoring_func("").has_value());
  CHECK_FALSE(parse_scoring_func("sigmoid ").has_value());
}

TEST_CASE("sigmoid is 1 / (1 + exp(-x))", "[ref][moe]") {
  CHECK(sigmoid_score(0.0f) == 0.5f);
  // expf(100) overflows to inf: exactly 0; and 1 / (1 + tiny) rounds to 1.
  CHECK(sigmoid_score(-100.0f) == 0.0f);
  CHECK(sigmoid_score(100.0f) == 1.0f);
  for (float x = -30.0f; x <= 30.0f; x += 0.37f) {
    double expected = 1.0 / (1.0 + std::exp(-static_cast<double>(x)));
    CHECK(sigmoid_score(x) == Approx(expected).epsilon(1e-6));
  }
  // Symmetry sigmoid(-x) = 1 - sigmoid(x), within fp32 rounding.
  CHECK(sigmoid_score(-2.0f) + sigmoid_score(2.0f) == Approx(1.0f));
}

TEST_CASE("sqrtsoftplus is sqrt(log1p(exp(x))), linear above 20",
          "[ref][moe]") {
  CHECK(sqrtsoftplus_score(0.0f) == Approx(std::sqrt(std::log(2.0))));
  // Above the threshold softplus(x) = x exactly, so the result is sqrtf(x).
  CHECK(sqrtsoftplus_score(20.5f) == std::sqrt(20.5f));
  CHECK(sqrtsoftplus_score(1e30f) == std::sqrt(1e30f));
  // Far below, softplus(x) ~ exp(x); no cancellation thanks to log1p.
  CHECK(sqrtsoftplus_score(-20.0f) ==
        Approx(std::sqrt(std::log1p(std::exp(-20.0)))).epsilon(1e-6));
  CHECK(sqrtsoftplus_score(-200.0f) == 0.0f);
  for (float x = -15.0f; x <= 20.0f; x += 0.41f) {
    double expected = std::sqrt(std::log1p(std::exp(static_cast<double>(x))));
    CHECK(sqrtsoftplus_score(x) == Approx(expected).epsilon(1e-6));
  }
}

TEST_CASE("softmax subtracts the max and sums to one", "[ref][moe]") {
  CHECK(softmax_scores(std::vector<float>{0, 0}) ==
        std::vector<float>{0.5f, 0.5f});
  // Without the max subtraction exp(1000) would overflow.
  CHECK(softmax_scores(std::vector<float>{1000, 1000, 1000, 1000}) ==
        std::vector<float>{0.25f, 0.25f, 0.25f, 0.25f});
  // x - max is exact for these, so a shift by 100 changes no bit.
  CHECK(softmax_scores(std::vector<float>{1, 2, 3, -4}) ==
        softmax_scores(std::vector<float>{101, 102, 103, 96}));
  std::vector<float> logits = {0.3f, -1.2f, 2.5f, 0.0f, 1.1f, -0.7f};
  std::vector<float> p = softmax_scores(logits);
  double max = 2.5, sum = 0, total = 0;
  for (float x : logits)
    sum += std::exp(static_cast<double>(x) - max);
  for (size_t i = 0; i < p.size(); ++i) {
    CHECK(p[i] == Approx(std::exp(logits[i] - max) / sum).epsilon(1e-6));
    total += p[i];
  }
  CHECK(total == Approx(1.0).epsilon(1e-6));
}
