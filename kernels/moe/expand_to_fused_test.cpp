// expand_to_fused_test.cpp - the case tables of expand_to_fused and
// expand_to_fused_with_sf: TileKernels' top-k counts and hidden sizes,
// mappings with fewer fused rows than slots (an expert-parallel rank's
// share) and with many padding rows, every element size, rows not 16-byte
// aligned, no tokens, no rows; the scales f32 row- or column-major and
// packed UE8M0 column-major at 32 and 128 channels; their benchmark shapes
// and mistakes. Each fused row is named by at most one slot, and a row
// named by none is padding (pos_to_expert -1), as get_fused_mapping makes
// them; every output element is written, and compared bytewise.
#include "op_test.h"

#include <string>

namespace tilejit::harness {

namespace {

/// The mapping: each of the N fused rows named by one random slot with
/// probability 1 - padding (else padding), pos_to_expert >= 0 on the
/// named ones.
std::map<std::string, Fill> mapping(double padding) {
  return {{"token_topk_to_pos", distinct_indices("pos_to_expert", padding)},
          {"pos_to_expert", inverse_indices("token_topk_to_pos")}};
}

/// --shape T x K x N x H of x's dtype.
Case expand(std::vector<int64_t> shape, DType x = DType::bf16,
            int kind = Case::gpu, double peer_us = 0) {
  return {.label = "",
          .shape = std::move(shape),
          .dtypes = {{"x", x}},
          .kind = kind,
          .peer_us = peer_us};
}

/// --shape T x K x N x H of e4m3 x with f32 or packed scales.
Case with_sf(std::vector<int64_t> shape, int64_t npc, bool col_major,
             bool packed, int kind = Case::gpu, double peer_us = 0) {
  return {.label = "",
          .shape = std::move(shape),
          .set = {{"num_per_channels", std::to_string(npc)},
                  {"use_tma_aligned_col_major_sf", col_major ? "1" : "0"}},
          .dtypes = {{"x", DType::e4m3},
                     {"x_sf", packed ? DType::i32 : DType::f32}},
          .kind = kind,
          .peer_us = peer_us};
}

} // namespace

TILEJIT_OP_TEST(expand_to_fused) {
  OpTest t{
      .op = "expand_to_fused", .fills = mapping(0.06), .poison_outputs = true};
  // TileKernels' top-k counts and hidden sizes (8 of 256 experts, 32 of
  // them here: about a fifth of the slots, N a little above them).
  for (int64_t topk : {2, 6, 8, 9})
    for (int64_t h : {576, 2048, 7168})
      t.cases.push_back(expand({300, topk, 300 * topk / 5 + 64, h}));
  // Every element size, and rows not 16-byte aligned.
  for (DType d : {DType::f32, DType::e4m3, DType::i64, DType::f16})
    t.cases.push_back(expand({129, 6, 200, 2560}, d));
  t.cases.push_back(expand({77, 4, 100, 100}));
  t.cases.push_back(expand({50, 3, 90, 33}, DType::u8));
  // More fused rows than slots (much padding), fewer than tokens, one slot
  // a token, 32 slots, no tokens (only padding rows), no rows.
  t.cases.push_back(expand({64, 2, 1000, 1024}));
  t.cases.push_back(expand({1000, 8, 300, 512}));
  t.cases.push_back(expand({513, 1, 513, 7168}));
  t.cases.push_back(expand({40, 32, 700, 256}));
  t.cases.push_back(expand({0, 8, 128, 2048}));
  t.cases.push_back(expand({100, 8, 0, 2048}));
  t.cases.push_back(expand({32008, 8, 34048, 7168}, DType::bf16, Case::big));
  // TileKernels' benchmark (top 8 of 256 experts, 32 of them local): about
  // 21.8k tokens routed here, 32k of their slots valid, N aligned to 128.
  t.cases.push_back(
      expand({21760, 8, 34048, 7168}, DType::bf16, Case::bench, 210.24));

  const auto x = fake(DType::bf16, {10, 512});
  const auto pos = fake(DType::i32, {10, 6}, {}, 0x100000);
  const auto experts = fake(DType::i32, {40}, {}, 0x200000);
  t.errors = {
      {"an out of another dtype",
       {x, pos, experts, fake(DType::f32, {40, 512}, {}, 0x300000)},
       {},
       "expand_to_fused: argument 'out' has dtype f32; requires bf16, the "
       "dtype of 'x'"},
      {"maps of other tokens",
       {x, fake(DType::i32, {9, 6}, {}, 0x100000), experts,
        fake(DType::bf16, {40, 512}, {}, 0x300000)},
       {},
       "expand_to_fused: argument 'token_topk_to_pos' has shape [9, 6]; "
       "requires [T, K] with T = 10"},
      {"an out of other rows",
       {x, pos, experts, fake(DType::bf16, {41, 512}, {}, 0x300000)},
       {},
       "expand_to_fused: argument 'out' has shape [41, 512]; requires [N, H] "
       "= [40, 512]"},
      {"33 slots",
       {x, fake(DType::i32, {10, 33}, {}, 0x100000), experts,
        fake(DType::bf16, {40, 512}, {}, 0x300000)},
       {},
       "expand_to_fused: argument 'token_topk_to_pos' has shape [10, 33] (K "
       "= 33); requires 1 <= K <= 32"},
  };
  return t;
}

TILEJIT_OP_TEST(expand_to_fused_with_sf) {
  std::map<std::string, Fill> fills = mapping(0.06);
  fills["x_sf:i32"] = bytes_in(100, 140);
  OpTest t{
      .op = "expand_to_fused_with_sf", .fills = fills, .poison_outputs = true};
  // TileKernels' layouts: f32 row-major (rounded scales) and packed UE8M0
  // column-major, at 32 and 128 channels, its hidden sizes; f32
  // column-major too.
  for (int64_t npc : {32, 128})
    for (int64_t h : {576, 2048, 7168}) {
      t.cases.push_back(with_sf({300, 8, 544, h}, npc, false, false));
      t.cases.push_back(with_sf({300, 6, 423, h}, npc, true, true));
    }
  t.cases.push_back(with_sf({129, 9, 301, 3072}, 128, true, false));
  t.cases.push_back(with_sf({0, 8, 128, 2048}, 128, true, true));
  t.cases.push_back(with_sf({77, 2, 0, 2048}, 32, false, false));
  t.cases.push_back(
      with_sf({32008, 8, 34048, 7168}, 128, true, true, Case::big));
  for (bool col : {false, true})
    t.cases.push_back(with_sf({21760, 8, 34048, 7168}, 128, col, col,
                              Case::bench, col ? 112.88 : 111.10));

  const auto x = fake(DType::e4m3, {10, 512});
  const auto sf = fake(DType::f32, {10, 4}, {}, 0x100000);
  const auto pos = fake(DType::i32, {10, 6}, {}, 0x200000);
  const auto experts = fake(DType::i32, {40}, {}, 0x300000);
  const auto out = fake(DType::e4m3, {40, 512}, {}, 0x400000);
  const auto out_sf = fake(DType::f32, {40, 4}, {}, 0x500000);
  t.errors = {
      {"64 channels a scale",
       {x, fake(DType::f32, {10, 8}, {}, 0x100000), pos, experts, out,
        fake(DType::f32, {40, 8}, {}, 0x500000)},
       {{"num_per_channels", ops::ParamValue{int64_t{64}}}},
       "expand_to_fused_with_sf: argument 'num_per_channels' is 64; requires "
       "32 or 128"},
      {"packed scales row-major",
       {x, fake(DType::i32, {10, 1}, {}, 0x100000), pos, experts, out,
        fake(DType::i32, {40, 1}, {}, 0x500000)},
       {},
       "expand_to_fused_with_sf: argument 'x_sf' has dtype i32 (packed "
       "UE8M0); requires use_tma_aligned_col_major_sf"},
      {"scales of 32 channels at 128",
       {x, fake(DType::f32, {10, 16}, {}, 0x100000), pos, experts, out, out_sf},
       {},
       "expand_to_fused_with_sf: argument 'x_sf' is f32[10, 16] strides "
       "[16, 1]; requires f32[10, 4]"},
      {"row-major out_sf with the column-major flag",
       {x, sf, pos, experts, out, out_sf},
       {{"use_tma_aligned_col_major_sf", ops::ParamValue{true}}},
       "expand_to_fused_with_sf: argument 'out_sf' is f32[40, 4] strides "
       "[4, 1]; requires f32[40, 4] strides [1, >= 40]"},
  };
  return t;
}

} // namespace tilejit::harness
