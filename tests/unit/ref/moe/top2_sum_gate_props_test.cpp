// top2_sum_gate_props_test.cpp - Properties of top2_sum_gate on seeded
// random inputs (spec §1.4): picks sorted by selection score with ties to
// the smaller index, inside the kept groups, weights normalised.
#include "moe_test_util.h"

#include <catch2/catch.hpp>

#include <set>

using namespace moe_test;
using namespace tilejit::moe;

namespace {

struct Config {
  int64_t groups, topk_groups, experts, topk;
};

/// Selection scores s and unbiased scores p of one row, from the public
/// scoring functions (tested on their own in scoring_test.cpp).
void scores(std::string_view scoring, const float *logit, const float *bias,
            int64_t experts, std::vector<float> &s, std::vector<float> &p) {
  s.assign(experts, 0);
  p.assign(experts, 0);
  if (scoring == "softmax") {
    p = softmax_scores(std::span<const float>(logit, experts));
    for (int64_t e = 0; e < experts; ++e)
      s[e] = logit[e] + bias[e];
    return;
  }
  for (int64_t e = 0; e < experts; ++e) {
    p[e] = scoring == "sigmoid" ? sigmoid_score(logit[e])
                                : sqrtsoftplus_score(logit[e]);
    s[e] = p[e] + bias[e];
  }
}

bool before(float a, int64_t i, float b, int64_t j) {
  return a > b || (a == b && i < j);
}

} // namespace

TEST_CASE("top2_sum_gate picks are sorted, grouped and normalised",
          "[ref][moe]") {
  std::mt19937 rng(17);
  std::normal_distribution<float> normal;
  const Config configs[] = {{0, 0, 72, 6},  {0, 0, 36, 6}, {8, 8, 256, 8},
                            {8, 4, 256, 8}, {4, 2, 32, 4}, {4, 1, 16, 4}};
  for (const Config &c : configs)
    for (std::string_view scoring : {"sigmoid", "sqrtsoftplus", "softmax"}) {
      INFO("E " << c.experts << " G " << c.groups << " Gk " << c.topk_groups
                << " " << scoring);
      const int64_t tokens = 24;
      std::vector<float> logits(tokens * c.experts), bias(c.experts);
      for (float &v : logits)
        // Rounded to a coarse grid so that equal scores occur.
        v = std::round(normal(rng) * 4) / 4;
      for (float &v : bias)
        v = std::round(normal(rng) * 8) / 64;
      HostTensor unmapped = HostTensor::zeros(DType::i64, {tokens, c.topk});
      const float scale = 1.5f;
      Top2SumGateResult r = top2_sum_gate_ref(
          f32({tokens, c.experts}, logits), f32({c.experts}, bias), c.topk,
          c.topk_groups, c.groups, false, 0, scale, 0, 1, 0, 1, scoring,
          std::nullopt, std::nullopt, std::nullopt, std::nullopt, unmapped);
      CHECK(compare_exact(unmapped, r.topk_idx) == "");
      for (int64_t t = 0; t < tokens; ++t) {
        std::vector<float> s, p;
        scores(scoring, &logits[t * c.experts], bias.data(), c.experts, s, p);
        std::vector<int64_t> sel = row<int64_t>(r.topk_idx, t);
        REQUIRE(std::set<int64_t>(sel.begin(), sel.end()).size() ==
                size_t(c.topk));
        // Kept groups by the spec's rank formula on top-2 sums of s.
        std::vector<bool> allowed(c.experts, true);
        if (c.groups != c.topk_groups) {
          const int64_t size = c.experts / c.groups;
          std::vector<float> score(c.groups);
          for (int64_t g = 0; g < c.groups; ++g) {
            std::vector<float> v(s.begin() + g * size,
                                 s.begin() + (g + 1) * size);
            std::partial_sort(v.begin(), v.begin() + 2, v.end(),
                              std::greater<float>());
            score[g] = v[0] + v[1];
          }
          for (int64_t g = 0; g < c.groups; ++g) {
            int64_t rank = 0;
            for (int64_t h = 0; h < c.groups; ++h)
              rank += score[h] > score[g] || (h < g && score[h] == score[g]);
            for (int64_t e = g * size; e < (g + 1) * size; ++e)
              allowed[e] = rank < c.topk_groups;
          }
        }
        for (int64_t k = 0; k < c.topk; ++k) {
          REQUIRE(allowed[sel[k]]);
          if (k > 0)
            REQUIRE(before(s[sel[k - 1]], sel[k - 1], s[sel[k]], sel[k]));
        }
        std::set<int64_t> picked(sel.begin(), sel.end());
        for (int64_t e = 0; e < c.experts; ++e)
          if (allowed[e] && !picked.count(e))
            REQUIRE(before(s[sel.back()], sel.back(), s[e], e));
        // Weights: p of the picks over their sum, times the scale.
        double sum = 0, total = 0;
        for (int64_t k = 0; k < c.topk; ++k)
          sum += p[sel[k]];
        for (int64_t k = 0; k < c.topk; ++k) {
          const float w = r.topk_weights.at<float>({t, k});
          REQUIRE(w == Approx(p[sel[k]] / sum * scale).epsilon(1e-5));
          total += w;
        }
        REQUIRE(total == Approx(scale).epsilon(1e-5));
      }
    }
}
