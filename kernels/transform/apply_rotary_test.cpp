// apply_rotary_test.cpp - apply_rotary's case table: NeoX and GPT-J pairs,
// conjugate, bf16 and f32, positions (i32, i64, per batch) or none, an
// offset, 3-D and 4-D x, few heads (several tokens a block) and many (head
// blocks), H not a power of two, x a slice of wider heads (partial RoPE,
// rows aligned and not), no tokens, the benchmark shape, mistakes. The
// kernel places its FMAs as the reference: every output compared bitwise.
#include "op_test.h"

namespace tilejit::harness {

TILEJIT_OP_TEST(apply_rotary) {
  OpTest t{.op = "apply_rotary",
           .fills = {{"positions", ids_below("L", 0)}},
           .poison_outputs = true};
  const std::map<std::string, std::string> positions = {
      {"positions", "passed"}};
  for (DType dt : {DType::bf16, DType::f32})
    for (const char *mode : {"", "interleaved", "conjugate", "both"}) {
      Case c{.label = mode, .shape = {300, 8, 128}, .dtypes = {{"", dt}}};
      const std::string m = mode;
      if (m == "interleaved" || m == "both")
        c.set["interleaved"] = "true";
      if (m == "conjugate" || m == "both")
        c.set["conjugate"] = "true";
      t.cases.push_back(c);
      c.shape = {200, 16, 64};
      c.set["positions"] = "passed";
      t.cases.push_back(c);
    }
  t.cases.push_back({.label = "i64 positions",
                     .shape = {100, 4, 128},
                     .set = positions,
                     .dtypes = {{"positions", DType::i64}}});
  t.cases.push_back({.label = "4-D, positions a batch",
                     .shape = {3, 70, 8, 64},
                     .set = positions});
  t.cases.push_back(
      {.label = "4-D, GPT-J",
       .shape = {2, 50, 4, 128},
       .set = {{"positions", "passed"}, {"interleaved", "true"}}});
  for (std::vector<int64_t> few : {std::vector<int64_t>{777, 1, 64},
                                   {301, 3, 128},
                                   {100, 5, 128},
                                   {50, 128, 128}})
    t.cases.push_back({.label = "heads", .shape = few, .set = positions});
  t.cases.push_back({.label = "offset, no positions",
                     .shape = {500, 4, 64},
                     .set = {{"seqlen_offset", "100"}, {"L", "600"}}});
  Case offset{.label = "offset and positions",
              .shape = {400, 2, 128},
              .set = {{"positions", "passed"},
                      {"seqlen_offset", "1000"},
                      {"L", "2048"}},
              .fills = {{"positions", integers(0, 1047)}}};
  t.cases.push_back(offset);
  // Partial RoPE: x the last R columns of wider heads.
  t.cases.push_back({.label = "a slice, aligned",
                     .shape = {100, 8, 64},
                     .set = positions,
                     .strides = {{"x", {8 * 192, 192, 1}}}});
  t.cases.push_back({.label = "a slice, unaligned",
                     .shape = {100, 8, 64},
                     .set = {{"positions", "passed"}, {"interleaved", "true"}},
                     .strides = {{"x", {8 * 130, 130, 1}}}});
  t.cases.push_back({.label = "no tokens", .shape = {0, 8, 128}});
  t.cases.push_back({.label = "",
                     .shape = {8192, 32, 128},
                     .set = positions,
                     .kind = Case::bench});
  const auto cache = fake(DType::f32, {64, 128}, {}, 0x40000);
  t.errors = {
      {"x of rank 2",
       {fake(DType::bf16, {8, 128}), cache, ops::absent(),
        fake(DType::bf16, {8, 128}, {}, 0x80000)},
       {},
       "apply_rotary: argument 'x' has rank 2; requires (T, H, R) or (B, T, "
       "H, R)"},
      {"R of 96",
       {fake(DType::bf16, {8, 4, 96}), fake(DType::f32, {64, 96}, {}, 0x40000),
        ops::absent(), fake(DType::bf16, {8, 4, 96}, {}, 0x80000)},
       {},
       "apply_rotary: argument 'x' has shape [8, 4, 96] (R = 96); requires "
       "64 <= R <= 128 and R a multiple of 64"},
      {"a cache of other columns",
       {fake(DType::bf16, {8, 4, 128}), fake(DType::f32, {64, 64}, {}, 0x40000),
        ops::absent(), fake(DType::bf16, {8, 4, 128}, {}, 0x80000)},
       {},
       "apply_rotary: argument 'cos_sin_cache' has shape [64, 64]; requires "
       "[L, R] = [64, 128]"},
      {"positions of other tokens",
       {fake(DType::bf16, {8, 4, 128}), cache,
        fake(DType::i32, {9}, {}, 0x60000),
        fake(DType::bf16, {8, 4, 128}, {}, 0x80000)},
       {},
       "apply_rotary: argument 'positions' has shape [9]; requires [...] = "
       "[8]"}};
  return t;
}

} // namespace tilejit::harness
