// mhc_pre_split_mixes_bwd_test.cpp - mhc_pre_split_mixes_bwd's case table:
// TileKernels' shapes (4 streams, post_mult 2), other stream counts (1, 3,
// 8, 12, 16), post_mult 0, one token, no tokens, the benchmark shape with
// TileKernels' time, and a mistake. Within TileKernels' rtol 1e-5, atol
// 2e-5 (the sums over tokens in another order; the reference's in
// float64).
#include "op_test.h"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

namespace tilejit::harness {

namespace {

Case split(std::vector<int64_t> lead, int64_t mhc, int kind = Case::gpu) {
  lead.push_back(mhc);
  return {.label = "",
          .shape = std::move(lead),
          .set = {{"mhc_post_mult_value", "2"}},
          .kind = kind};
}

/// The scale's gradient: TileKernels' rtol 1e-5 / atol 2e-5, plus the
/// sum's own rounding scale, 64 f32 ulps of 1 times the root of the sum of
/// its terms' squares (|gz| bounded by |pre_grad| / 4, |post_grad p (1 - p
/// / post_mult)| and |comb_grad|). Each element adds mhc (or mhc^2)
/// products a token, and the sum may cancel far below the partial sums its
/// additions round: 1 x 333 tokens at 16 streams gave -10.959114 against
/// the float64 -10.959258 (85,000 products, partial sums of hundreds),
/// where the bound is 1.2e-3; at TileKernels' 2 x 4096 tokens and 4
/// streams, about 1.4e-3 beside rtol's ~3.6e-3 for sums of ~360.
Compare scale_grad_close() {
  return {"within rtol 1e-5, atol 2e-5 plus 64 f32 ulps of the root of the sum "
          "of the terms' squares",
          [](const ref::HostTensor &got, const ref::HostTensor &want,
             const RunData &run) -> std::string {
            if (got.numel() != 3 || want.numel() != 3)
              return fmt::format("got {}, expected {}", got.to_string(),
                                 want.to_string());
            auto flat = [&](const char *name) {
              const ref::HostTensor &t = run.call.tensor(name);
              return t.is_contiguous() ? t : t.clone();
            };
            const ref::HostTensor pre = flat("pre_grad"),
                                  post = flat("post_grad"),
                                  comb = flat("comb_grad"),
                                  in = flat("input_mixes"),
                                  mix = flat("post_layer_mix");
            const double mult = run.call.real("mhc_post_mult_value");
            const int64_t m3 = in.rank() > 0 ? in.size(in.rank() - 1) : 0;
            const int64_t tokens = m3 > 0 ? in.numel() / m3 : 0;
            const int64_t mhc = tokens > 0 ? pre.numel() / tokens : 0;
            double sq[3] = {0, 0, 0};
            const float *x = in.data<float>();
            for (int64_t t = 0; t < tokens; ++t)
              for (int64_t j = 0; j < m3; ++j) {
                double g;
                if (j < mhc) {
                  g = pre.data<float>()[t * mhc + j] / 4.0;
                } else if (j < 2 * mhc) {
                  const double p = mix.data<float>()[t * mhc + j - mhc];
                  g = mult == 0 ? 0
                                : post.data<float>()[t * mhc + j - mhc] * p *
                                      (1 - p / mult);
                } else {
                  g = comb.data<float>()[t * mhc * mhc + j - 2 * mhc];
                }
                const double term = g * x[t * m3 + j];
                sq[std::min<int64_t>(2, j / std::max<int64_t>(mhc, 1))] +=
                    term * term;
              }
            for (int64_t c = 0; c < 3; ++c) {
              const double g = got.data<float>()[c], w = want.data<float>()[c];
              const double bound =
                  2e-5 + 1e-5 * std::fabs(w) + 64 * 0x1p-24 * std::sqrt(sq[c]);
              if (!(std::fabs(g - w) <= bound))
                return fmt::format("[{}]: {} vs reference {} (bound {:.3g})", c,
                                   g, w, bound);
            }
            return "";
          }};
}

} // namespace

TILEJIT_OP_TEST(mhc_pre_split_mixes_bwd) {
  const Compare close = allclose(1e-5, 2e-5);
  OpTest t{.op = "mhc_pre_split_mixes_bwd",
           .fills = {{"post_layer_mix", uniform(0, 2)}},
           .compare = {{"input_mixes_grad", close},
                       {"mhc_scale_grad", scale_grad_close()},
                       {"mhc_base_grad", close}},
           .poison_outputs = true};
  for (int64_t n0 : {1, 2})
    for (int64_t n1 : {1024, 4096})
      t.cases.push_back(split({n0, n1}, 4));
  for (int64_t mhc : {1, 3, 8, 12, 16})
    t.cases.push_back(split({1, 333}, mhc));
  Case zero_mult = split({1, 100}, 4);
  zero_mult.set["mhc_post_mult_value"] = "0";
  zero_mult.label = "post_mult 0";
  t.cases.push_back(zero_mult);
  t.cases.push_back(split({1, 1}, 4));
  t.cases.push_back(split({1, 0}, 4));
  Case bench = split({2, 4096}, 4, Case::bench);
  bench.peer_us = 20.45;
  t.cases.push_back(bench);
  const auto col = fake(DType::f32, {8, 4, 1}, {}, 0x90000);
  t.errors = {
      {"mixes of another count",
       {col, col, fake(DType::f32, {8, 4, 4}, {}, 0xa0000),
        fake(DType::f32, {8, 20}), col, fake(DType::f32, {3}, {}, 0xb0000),
        fake(DType::f32, {20}, {}, 0xc0000),
        fake(DType::f32, {8, 20}, {}, 0xd0000),
        fake(DType::f32, {3}, {}, 0xe0000),
        fake(DType::f32, {20}, {}, 0xf0000)},
       {},
       "mhc_pre_split_mixes_bwd: argument 'input_mixes' has 20 mixes a "
       "token; requires mhc * (mhc + 2) = 24 (mhc = 4, the streams of "
       "'pre_grad')"}};
  return t;
}

} // namespace tilejit::harness
