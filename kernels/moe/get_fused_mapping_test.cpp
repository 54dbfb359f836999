// get_fused_mapping_test.cpp - get_fused_mapping's case table: TileKernels'
// MoE shapes (4001 tokens, top 2 to 9, its local expert counts) at
// alignments 64 and 128, alignment 1, experts in several chunks (33, 72,
// 256, 1024), one slot, no tokens, a million entries (many steps a block),
// N above what the segments need (a tail of -1), its benchmark shape, and
// mistakes. Ids uniform below num_experts, some -1; every map compared
// bytewise (the outputs start zeroed, so a -1 left unwritten shows).
#include "op_test.h"

#include <string>

namespace tilejit::harness {

namespace {

/// The position count that holds every segment of any ids:
/// align_down(T K + (alignment - 1) E, alignment) (TileKernels' bound).
int64_t bound(int64_t tokens, int64_t topk, int64_t experts,
              int64_t alignment) {
  return (tokens * topk + (alignment - 1) * experts) / alignment * alignment;
}

/// --shape T x K, N the bound plus `extra` (-1: num_expanded_tokens 0,
/// the op's own bound).
Case mapping(int64_t tokens, int64_t topk, int64_t experts, int64_t alignment,
             int64_t extra = 0, int kind = Case::gpu, double peer_us = 0) {
  const int64_t n =
      extra < 0 ? 0 : bound(tokens, topk, experts, alignment) + extra;
  return {.label = "",
          .shape = {tokens, topk},
          .set = {{"num_experts", std::to_string(experts)},
                  {"alignment", std::to_string(alignment)},
                  {"num_expanded_tokens", std::to_string(n)}},
          .kind = kind,
          .peer_us = peer_us};
}

} // namespace

TILEJIT_OP_TEST(get_fused_mapping) {
  OpTest t{.op = "get_fused_mapping",
           .fills = {{"topk_idx", ids_below("num_experts")}}};
  // TileKernels' local expert counts (72 or 256 experts over 8 or 64
  // ranks) and top-k counts.
  for (int64_t experts : {9, 32, 4})
    for (int64_t topk : {2, 6, 8, 9})
      for (int64_t alignment : {64, 128})
        t.cases.push_back(mapping(4001, topk, experts, alignment));
  t.cases.push_back(mapping(4001, 8, 1, 128));
  t.cases.push_back(mapping(3000, 6, 33, 1));
  t.cases.push_back(mapping(2000, 8, 72, 16));
  t.cases.push_back(mapping(8001, 8, 256, 128));
  t.cases.push_back(mapping(700, 9, 1024, 4));
  t.cases.push_back(mapping(1, 1, 32, 128));
  t.cases.push_back(mapping(0, 8, 32, 128));
  t.cases.push_back(mapping(0, 8, 32, 128, 300));
  t.cases.push_back(mapping(517, 7, 20, 8, 1000));
  t.cases.push_back(mapping(3001, 6, 32, 64, -1));
  t.cases.push_back(mapping(125000, 8, 32, 128));
  // TileKernels' benchmark: top 8 of 256 experts, 32 of them local (about
  // 21.8k tokens routed here), N its bound (no sync).
  t.cases.push_back(mapping(21760, 8, 32, 128, -1, Case::bench, 9.54));

  const auto ids = fake(DType::i64, {10, 8});
  const auto n = fake(DType::i32, {2048}, {}, 0x100000);
  const auto pos = fake(DType::i32, {10, 8}, {}, 0x200000);
  const auto e = fake(DType::i32, {32}, {}, 0x300000);
  t.errors = {
      {"no experts",
       {ids, n, n, n, pos, e, e, e},
       {{"num_experts", ops::ParamValue{int64_t{0}}},
        {"num_expanded_tokens", ops::ParamValue{int64_t{2048}}}},
       "get_fused_mapping: argument 'num_experts' is 0; requires 1 to 1024"},
      {"alignment 0",
       {ids, n, n, n, pos, e, e, e},
       {{"alignment", ops::ParamValue{int64_t{0}}},
        {"num_expanded_tokens", ops::ParamValue{int64_t{2048}}}},
       "get_fused_mapping: argument 'alignment' is 0; requires 1 to 1048576"},
      {"i32 ids",
       {fake(DType::i32, {10, 8}), n, n, n, pos, e, e, e},
       {},
       "get_fused_mapping: argument 'topk_idx' has dtype i32; requires i64"},
      {"token_topk_to_pos of another shape",
       {ids, n, n, n, fake(DType::i32, {10, 6}, {}, 0x200000), e, e, e},
       {{"num_expanded_tokens", ops::ParamValue{int64_t{2048}}}},
       "get_fused_mapping: argument 'token_topk_to_pos' has shape [10, 6]; "
       "requires [T, K] = [10, 8]"},
      {"maps of two lengths",
       {ids, n, fake(DType::i32, {2047}, {}, 0x100000), n, pos, e, e, e},
       {{"num_expanded_tokens", ops::ParamValue{int64_t{2048}}}},
       "get_fused_mapping: argument 'pos_to_token' is i32[2047] strides [1]; "
       "requires i32[2048]"},
      {"maps of the bound's length by default",
       {ids, n, n, n, pos, e, e, e},
       {},
       "get_fused_mapping: argument 'pos_to_expert' is i32[2048] strides [1]; "
       "requires i32[4096]"},
      {"expert_end of another length",
       {ids, n, n, n, pos, e, fake(DType::i32, {31}, {}, 0x300000), e},
       {{"num_expanded_tokens", ops::ParamValue{int64_t{2048}}}},
       "get_fused_mapping: argument 'expert_end' has shape [31]; requires "
       "[num_experts] = [32]"},
  };
  return t;
}

} // namespace tilejit::harness
