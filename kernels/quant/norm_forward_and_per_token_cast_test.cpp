// norm_forward_and_per_token_cast_test.cpp - the case table: bf16 and f32,
// with and without weight, residual, out_bf16 and rstd, the three scale
// layouts (packed with a last word of pad bytes), 3-D-sized rows, H not a
// multiple of 256 (a partial chunk) nor of 32 (a group of 16), one row, no
// rows, the benchmark shape, mistakes.
//
// The reference's norm sums in float64 with an exact rsqrt, so y differs
// from the kernel's within a rounding, and so may its cast. The spec's own
// promise is checked instead: with bf16 x and out_bf16 (which then is y
// itself), out and out_sf are bitwise per_token_cast_ref of the GPU's
// out_bf16. Otherwise out dequantized with the GPU's scales lies within
// half an e4m3 step of the reference's y, and each scale within the
// reference's by y's rounding (rounded scales: the same power of two, or
// the next one either side where y's rounding crossed it). Packed pad
// bytes must be 0 either way; outputs start poisoned.
#include "op_test.h"

#include "common/convert.h"
#include "quant/norm_forward.h"
#include "quant/reference.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <vector>

namespace tilejit::harness {

namespace {

constexpr int64_t kGroup = 32;

bool bitwise_checkable(const RunData &run) {
  return run.call.tensor("x").dtype() == DType::bf16 &&
         run.call.has("out_bf16");
}

/// per_token_cast_ref of the GPU's own y (its out_bf16, for bf16 x).
quant::QuantTensor cast_of_gpu_output(const RunData &run) {
  const ops::HostCall &c = run.call;
  return quant::per_token_cast_ref(
      run.output("out_bf16"), "e4m3", kGroup, std::nullopt,
      c.flag("use_tma_aligned_col_major_sf"), c.flag("round_sf"),
      c.flag("use_packed_ue8m0"));
}

/// The reference's y in f32 (its norm_forward in x's dtype).
std::vector<float> reference_y(const ops::HostCall &c) {
  const ref::HostTensor y =
      quant::norm_forward_ref(
          c.tensor("x"), c.given("weight"), static_cast<float>(c.real("eps")),
          c.given("residual"), static_cast<float>(c.real("out_scale")))
          .out;
  std::vector<float> v(static_cast<size_t>(y.numel()));
  for (int64_t i = 0; i < y.numel(); ++i)
    v[static_cast<size_t>(i)] = y.dtype() == DType::bf16
                                    ? ref::bf16_to_f32(y.data<uint16_t>()[i])
                                    : y.data<float>()[i];
  return v;
}

/// "" unless a packed word's bytes past the last group are not 0.
std::string pad_bytes_zero(const ref::HostTensor &sf, int64_t groups) {
  if (sf.dtype() != DType::i32)
    return "";
  for (int64_t m = 0; m < sf.size(0); ++m)
    for (int64_t j = groups; j < sf.size(1) * 4; ++j) {
      const auto w = static_cast<uint32_t>(sf.at<int32_t>({m, j / 4}));
      if ((w >> (8 * (j % 4))) & 0xff)
        return fmt::format("row {}: pad byte {} of the packed scales is "
                           "0x{:02x}; expected 0",
                           m, j, (w >> (8 * (j % 4))) & 0xff);
    }
  return "";
}

Compare quantized_out() {
  return {"bitwise per_token_cast of the GPU's out_bf16 (bf16 x with "
          "out_bf16), else dequantized within half an e4m3 step of y",
          [](const ref::HostTensor &got, const ref::HostTensor &,
             const RunData &run) -> std::string {
            if (bitwise_checkable(run))
              return ref::compare_exact(got, cast_of_gpu_output(run).data);
            const std::vector<float> y = reference_y(run.call);
            const ref::HostTensor &sf = run.output("out_sf");
            const int64_t h = got.size(1);
            for (int64_t m = 0; m < got.size(0); ++m)
              for (int64_t k = 0; k < h; ++k) {
                const float s = quant::read_sf(sf, m, k / kGroup);
                const double deq =
                    double{ref::e4m3_to_f32(got.at<uint8_t>({m, k}))} * s;
                const double want = y[static_cast<size_t>(m * h + k)];
                // Half an e4m3 step (2^-4 relative; 2^-10 x sf among the
                // subnormals) and y's own rounding (2^-8).
                const double bound =
                    (0x1p-4 + 0x1p-7) * std::abs(want) + 0x1p-10 * s * 1.01;
                if (!(std::abs(deq - want) <= bound))
                  return fmt::format("out[{}, {}] = {} x sf {} = {}; y is {} "
                                     "(bound {})",
                                     m, k,
                                     ref::e4m3_to_f32(got.at<uint8_t>({m, k})),
                                     s, deq, want, bound);
              }
            return "";
          }};
}

Compare quantized_sf() {
  return {"bitwise per_token_cast of the GPU's out_bf16 (bf16 x with "
          "out_bf16), else within y's rounding of the reference's",
          [](const ref::HostTensor &got, const ref::HostTensor &want,
             const RunData &run) -> std::string {
            if (bitwise_checkable(run))
              return ref::compare_exact(got, cast_of_gpu_output(run).sf);
            const int64_t groups =
                (run.call.tensor("x").size(1) + kGroup - 1) / kGroup;
            if (std::string pad = pad_bytes_zero(got, groups); !pad.empty())
              return pad;
            const bool round = run.call.flag("round_sf");
            for (int64_t m = 0; m < run.call.tensor("x").size(0); ++m)
              for (int64_t g = 0; g < groups; ++g) {
                const double a = quant::read_sf(got, m, g),
                             b = quant::read_sf(want, m, g);
                const bool ok = round ? (a == b || a == 2 * b || 2 * a == b)
                                      : std::abs(a - b) <= 0x1p-7 * b;
                if (!ok)
                  return fmt::format("sf[{}, {}] = {}; the reference's is {}",
                                     m, g, a, b);
              }
            return "";
          }};
}

/// mega_moe_sf: token t's packed scale words (the GPU's own out_sf, which
/// its compare checks) in row mega_moe_row(t); every other row untouched
/// (still the poison's -1).
Compare mega_rows() {
  return {"each token's packed scales in its row, the other rows untouched",
          [](const ref::HostTensor &got, const ref::HostTensor &,
             const RunData &run) -> std::string {
            const ref::HostTensor &sf = run.output("out_sf");
            const int64_t bm = run.call.integer("mega_moe_block_m");
            std::vector<bool> hit(static_cast<size_t>(got.size(0)));
            for (int64_t t = 0; t < sf.size(0); ++t) {
              const int64_t row = quant::mega_moe_row(t, bm);
              hit[static_cast<size_t>(row)] = true;
              for (int64_t w = 0; w < got.size(1); ++w)
                if (got.at<int32_t>({row, w}) != sf.at<int32_t>({t, w}))
                  return fmt::format("token {}'s word {} in row {} is 0x{:08x}"
                                     "; out_sf's is 0x{:08x}",
                                     t, w, row, got.at<int32_t>({row, w}),
                                     sf.at<int32_t>({t, w}));
            }
            for (int64_t row = 0; row < got.size(0); ++row)
              for (int64_t w = 0; w < got.size(1) && !hit[row]; ++w)
                if (got.at<int32_t>({row, w}) != -1)
                  return fmt::format("row {} (no token's) was written", row);
            return "";
          }};
}

struct Options {
  DType dtype = DType::bf16;
  bool weight = true, residual = false, out_bf16 = true, rstd = false;
  bool col_major = false, round = false, packed = false;
  const char *out_scale = "1";
  int64_t mega_block = 0; ///< mega_moe_block_m; 0: no mega_moe_sf
  int kind = Case::gpu;
};

Case norm_cast(const char *label, int64_t t, int64_t h, const Options &o) {
  auto flag = [](bool b) { return b ? "true" : "false"; };
  auto passed = [](bool b) { return b ? "passed" : "none"; };
  return {.label = label,
          .shape = {t, h},
          .set = {{"weight", passed(o.weight)},
                  {"residual", passed(o.residual)},
                  {"residual_out", passed(o.residual)},
                  {"out_bf16", passed(o.out_bf16)},
                  {"rstd", passed(o.rstd)},
                  {"out_scale", o.out_scale},
                  {"use_tma_aligned_col_major_sf", flag(o.col_major)},
                  {"round_sf", flag(o.round)},
                  {"use_packed_ue8m0", flag(o.packed)},
                  {"mega_moe_sf", passed(o.mega_block > 0)},
                  {"mega_moe_block_m", std::to_string(o.mega_block)}},
          .dtypes = {{"x", o.dtype}},
          .kind = o.kind};
}

} // namespace

TILEJIT_OP_TEST(norm_forward_and_per_token_cast) {
  OpTest t{.op = "norm_forward_and_per_token_cast",
           .compare = {{"out", quantized_out()},
                       {"out_sf", quantized_sf()},
                       {"out_bf16", allclose(8e-3, 1e-5)},
                       {"rstd", allclose(2e-6, 0)},
                       {"mega_moe_sf", mega_rows()}},
           .poison_outputs = true};
  for (DType dt : {DType::bf16, DType::f32}) {
    t.cases.push_back(norm_cast("", 4096, 7168, {.dtype = dt}));
    t.cases.push_back(norm_cast(
        "residual, rstd", 1000, 4096,
        {.dtype = dt, .residual = true, .rstd = true, .round = true}));
    t.cases.push_back(norm_cast("without out_bf16", 500, 2048,
                                {.dtype = dt, .out_bf16 = false}));
  }
  t.cases.push_back(norm_cast("no weight, out_scale", 300, 2048,
                              {.weight = false, .out_scale = "0.5"}));
  t.cases.push_back(
      norm_cast("column-major", 515, 4096, {.col_major = true, .round = true}));
  t.cases.push_back(norm_cast("column-major, not rounded", 515, 1536,
                              {.residual = true, .col_major = true}));
  // 7168 / 32 = 224 scales, 56 whole words; 4128 / 32 = 129, a last word
  // with 3 pad bytes.
  t.cases.push_back(norm_cast(
      "packed", 515, 7168, {.col_major = true, .round = true, .packed = true}));
  t.cases.push_back(norm_cast("packed, partial chunk, pad bytes", 300, 4128,
                              {.residual = true,
                               .rstd = true,
                               .col_major = true,
                               .round = true,
                               .packed = true}));
  t.cases.push_back(norm_cast("packed, f32, without out_bf16", 129, 4128,
                              {.dtype = DType::f32,
                               .out_bf16 = false,
                               .col_major = true,
                               .round = true,
                               .packed = true}));
  // mega_moe_sf: blocks of 64 rows (515 tokens: 9 tiles of 128 rows, the
  // last partly padding), of 200 (two 128-row tiles a block), of 128.
  for (auto [tokens, block] :
       {std::pair{515, 64}, std::pair{300, 200}, std::pair{256, 128}})
    t.cases.push_back(norm_cast("mega_moe_sf", tokens, 7168,
                                {.col_major = true,
                                 .round = true,
                                 .packed = true,
                                 .mega_block = block}));
  t.cases.push_back(norm_cast("a group of 16", 64, 4112, {.rstd = true}));
  t.cases.push_back(norm_cast("", 1, 16, {.round = true}));
  t.cases.push_back(norm_cast("no rows", 0, 1024, {.col_major = true}));
  t.cases.push_back(norm_cast("", 8192, 7168,
                              {.out_bf16 = false,
                               .col_major = true,
                               .round = true,
                               .packed = true,
                               .kind = Case::bench}));
  t.cases.push_back(norm_cast("", 8192, 7168,
                              {.residual = true,
                               .rstd = true,
                               .col_major = true,
                               .round = true,
                               .packed = true,
                               .kind = Case::bench}));

  const auto x = fake(DType::bf16, {8, 1024}), none = ops::absent();
  const auto out = fake(DType::e4m3, {8, 1024}, {}, 0x100000);
  const auto sf = fake(DType::f32, {8, 32}, {}, 0x200000);
  t.errors = {
      {"a group of 128",
       {x, none, none, out, fake(DType::f32, {8, 8}, {}, 0x200000), none, none,
        none, none},
       {{"num_per_channels", int64_t{128}}},
       "norm_forward_and_per_token_cast: argument 'num_per_channels' is 128; "
       "requires 32 (with fmt 'e4m3', the only form TileKernels has)"},
      {"packed without rounding",
       {x, none, none, out, sf, none, none, none, none},
       {{"use_packed_ue8m0", true}, {"use_tma_aligned_col_major_sf", true}},
       "norm_forward_and_per_token_cast: argument 'use_packed_ue8m0' is true; "
       "requires use_tma_aligned_col_major_sf and round_sf"},
      {"residual_out without residual",
       {x, none, none, out, sf, none,
        fake(DType::bf16, {8, 1024}, {}, 0x300000), none, none},
       {},
       "norm_forward_and_per_token_cast: argument 'residual_out' is passed "
       "without 'residual'; requires both or neither"},
      {"a block of rows without mega_moe_sf",
       {x, none, none, out, sf, none, none, none, none},
       {{"mega_moe_block_m", int64_t{64}}},
       "norm_forward_and_per_token_cast: argument 'mega_moe_block_m' is 64 "
       "while 'mega_moe_sf' is None; requires both (a block of rows > 0) or "
       "neither"},
      {"mega_moe_sf with f32 scales",
       {x, none, none, out, sf, none, none, none,
        fake(DType::i32, {128, 8}, {1, 128}, 0x400000)},
       {{"mega_moe_block_m", int64_t{64}}},
       "norm_forward_and_per_token_cast: argument 'mega_moe_sf' is passed "
       "with use_packed_ue8m0=false and H = 1024; requires packed UE8M0 "
       "scales and H a multiple of 128"}};
  return t;
}

} // namespace tilejit::harness
