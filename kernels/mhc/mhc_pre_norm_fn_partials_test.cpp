// mhc_pre_norm_fn_partials_test.cpp - the case table: TileKernels' pre_norm_fn
// shapes (4096 and 8192 tokens, H 1280 to 7168, 16 splits) and its split-K
// test's (13, 48 and 512 tokens: partial token tiles), one split, parts of
// 1024, 160, 24 and 16 columns, 1 and 2 streams, no tokens (all with the
// default 2 stages of cp.async), 0, 1 and 3 stages, the benchmark shapes
// (unpipelined and 2 stages), mistakes. The
// reference sums in float64 with the kernel's TF32 fn; the tensor core's
// accumulation differs by up to ~1e-6 absolute.
#include "op_test.h"

namespace tilejit::harness {

namespace {

Case partials(int64_t t, int64_t mhc, int64_t h, int64_t splits = 16,
              int kind = Case::gpu) {
  return {.label = "",
          .shape = {t, mhc, h},
          .set = {{"n_splits", std::to_string(splits)}},
          .kind = kind};
}

} // namespace

TILEJIT_OP_TEST(mhc_pre_norm_fn_partials) {
  OpTest t{.op = "mhc_pre_norm_fn_partials",
           .fills = {{"fn", normal(0, 1e-4)}},
           // The tensor core's tf32 accumulation is not IEEE f32: over
           // one split of K = 16384 an element of ~1e-4 was 3.7e-7 off on
           // the H100 (TileKernels bounds the normalised output by 1e-3).
           .compare = {{"gemm_out_mul", allclose(1e-3, 1e-6)},
                       {"gemm_out_sqrsum", allclose(1e-5, 0)}},
           .poison_outputs = true};
  for (int64_t tokens : {4096, 8192})
    for (int64_t h : {1280, 2560, 7168})
      t.cases.push_back(partials(tokens, 4, h));
  for (int64_t tokens : {13, 48, 512})
    for (int64_t h : {1280, 2560, 4096, 7168})
      t.cases.push_back(partials(tokens, 4, h));
  t.cases.push_back(partials(1000, 4, 4096, 1));
  t.cases.push_back(partials(300, 4, 1280, 5));  // parts of 1024: chunks of 128
  t.cases.push_back(partials(300, 4, 1000, 25)); // parts of 160: chunks of 32
  // Parts of 24: chunks of 8, whose shared rows need no padding.
  t.cases.push_back(partials(100, 4, 1200, 200));
  t.cases.push_back(partials(100, 2, 512, 4));
  t.cases.push_back(partials(100, 1, 256, 2));
  Case head = partials(300, 4, 1280); // mhc_head's fn: mhc rows
  head.set["M3"] = "4";
  t.cases.push_back(head);
  t.cases.push_back(partials(0, 4, 1280));
  // From 1024 tokens 64 a block: a partial last tile, chunks of 64, 32 and 8.
  t.cases.push_back(partials(1025, 4, 1280));
  t.cases.push_back(partials(1100, 4, 1000, 25));
  t.cases.push_back(partials(1030, 4, 1200, 200));
  // The other depths (the cases above run the default 2 stages): loads
  // through registers (0) and cp.async with 1 and 3 stages over partial
  // token tiles (of 32 and 64 tokens), chunks of 64 and 32, fewer chunks
  // than stages, the head's fn, no tokens.
  for (int stages : {0, 1, 3}) {
    const std::string n = std::to_string(stages);
    std::vector<Case> cases = {
        partials(513, 4, 1280),     partials(48, 4, 7168),
        partials(300, 4, 1000, 25), partials(100, 2, 64, 8),
        partials(0, 4, 1280),       partials(1025, 4, 1280),
        partials(1100, 4, 1000, 25)};
    cases.push_back(head);
    for (Case &c : cases) {
      c.label = "stages " + n;
      c.set["stages"] = n;
      t.cases.push_back(c);
    }
  }
  for (int64_t h : {4096, 7168})
    for (const char *stages : {"0", "2"}) {
      Case c = partials(8192, 4, h, 16, Case::bench);
      c.set["stages"] = stages;
      t.cases.push_back(c);
    }

  const auto x = fake(DType::bf16, {8, 4, 1000}),
             fn = fake(DType::f32, {24, 4000}, {}, 0x100000),
             mul = fake(DType::f32, {16, 8, 24}, {}, 0x200000),
             sq = fake(DType::f32, {16, 8}, {}, 0x300000);
  t.errors = {
      {"parts of 250 columns",
       {x, fn, mul, sq},
       {},
       "mhc_pre_norm_fn_partials: argument 'n_splits' is 16; requires equal "
       "parts of mhc * H = 4000 columns, each a multiple of 8"},
      {"fn of another H",
       {x, fake(DType::f32, {24, 4096}, {}, 0x100000),
        fake(DType::f32, {10, 8, 24}, {}, 0x200000),
        fake(DType::f32, {10, 8}, {}, 0x300000)},
       {{"n_splits", int64_t{10}}},
       "mhc_pre_norm_fn_partials: argument 'fn' has shape [24, 4096]; "
       "requires [M3, mhc * H] = [24, 4000]"},
      {"80 mixes (8 streams)",
       {fake(DType::bf16, {8, 8, 64}),
        fake(DType::f32, {80, 512}, {}, 0x100000),
        fake(DType::f32, {16, 8, 80}, {}, 0x200000), sq},
       {},
       "mhc_pre_norm_fn_partials: argument 'fn' has 80 rows; requires at "
       "most 32 (the mixes in one 32-wide tile)"}};
  return t;
}

} // namespace tilejit::harness
