// top2_sum_gate_test.cpp - top2_sum_gate's case table: TileKernels' (G, Gk,
// E, S, K) configurations under each scoring function, with and without
// masked tokens, fixed routing, the physical map and shared experts, on
// both TP ranks; all-equal and heavily tied logits; tails and no tokens;
// the benchmark shapes; and mistakes. Every output is compared bytewise.
#include "op_test.h"

#include <string>

namespace tilejit::harness {

namespace {

/// A TileKernels configuration (spec §1.4's tests).
struct Config {
  int64_t groups, topk_groups, experts, shared, topk;
};

/// --shape T x E with `config`; `all`: mask, fixed routing, the physical
/// map of 32 extra experts and the shared experts (where valid), and the
/// unmapped picks as an output; EP rank 1 of 4, TP rank `tp` of 2.
Case gate(int64_t tokens, const Config &g, const char *scoring, bool all,
          int tp, int kind = Case::gpu) {
  const auto str = [](int64_t v) { return std::to_string(v); };
  const char *given = all ? "passed" : "none";
  // Shared experts where TileKernels' tests use them: S divides K and K / S
  // divides E.
  const bool valid = g.shared > 0 && g.topk % g.shared == 0 &&
                     g.experts % (g.topk / g.shared) == 0;
  const int64_t shared = all && valid ? g.shared : 0;
  Case c{.label = "",
         .shape = {tokens, g.experts},
         .set = {{"num_topk", str(g.topk)},
                 {"num_groups", str(g.groups)},
                 {"num_topk_groups", str(g.topk_groups)},
                 {"use_shared_as_routed", shared > 0 ? "true" : "false"},
                 {"num_shared_experts", str(shared)},
                 {"routed_scaling_factor", "1.5"},
                 {"ep_rank", "1"},
                 {"num_ep_ranks", "4"},
                 {"tp_rank", str(tp)},
                 {"num_tp_ranks", "2"},
                 {"scoring_func", scoring},
                 {"mask", given},
                 {"fix_routing_mask", given},
                 {"to_physical_map", given},
                 {"logical_count", given},
                 {"unmapped_topk_idx", given},
                 {"unmapped_out", given}},
         .kind = kind};
  if (all) {
    c.set["L"] = str(g.experts + shared);
    c.set["C"] = "33";
  }
  return c;
}

} // namespace

TILEJIT_OP_TEST(top2_sum_gate) {
  OpTest t{.op = "top2_sum_gate",
           .fills = {{"bias", normal(0, 0.1)},
                     {"mask", bytes_in(0, 1)},
                     {"fix_routing_mask", bytes_in(0, 1)},
                     {"to_physical_map", row_indices("bias", 0)},
                     {"logical_count", integers(1, 4)},
                     {"unmapped_topk_idx", row_indices("bias", 0)}}};
  const Config configs[] = {
      {0, 0, 72, 1, 6},  {0, 0, 32, 2, 6},  {0, 0, 64, 2, 6},
      {0, 0, 96, 2, 6},  {0, 0, 16, 2, 6},  {0, 0, 36, 2, 6},
      {0, 0, 108, 2, 6}, {0, 0, 128, 2, 6}, {0, 0, 144, 2, 6},
      {8, 8, 256, 2, 8}, {8, 4, 256, 2, 8}};
  for (const Config &g : configs)
    for (const char *scoring : {"sigmoid", "sqrtsoftplus", "softmax"}) {
      t.cases.push_back(gate(37, g, scoring, true, 1));
      t.cases.push_back(gate(5, g, scoring, false, 0));
      t.cases.push_back(gate(4001, g, scoring, true, 0, Case::big));
    }
  // Groups of other sizes and counts: 4 of 16 out of 64 (two kept), 16 of
  // 16 out of 256 (three kept), 32 of 2 (the smallest group).
  for (const Config &g : {Config{4, 2, 64, 2, 4}, Config{16, 3, 256, 2, 6},
                          Config{32, 5, 64, 1, 3}})
    t.cases.push_back(gate(23, g, "sigmoid", true, 0));
  // Ties everywhere (logits 2^-2 .. 2^2, a bias of 0 or 2^-3 .. 2^-1) and
  // all-equal logits: the lower expert and group first.
  for (const Config &g : {configs[0], configs[10]})
    for (const char *scoring : {"sigmoid", "softmax"}) {
      Case tied = gate(37, g, scoring, true, 0);
      tied.fills = {{"logits", exponents(-2, 2)}, {"bias", exponents(-3, -1)}};
      t.cases.push_back(tied);
      Case equal = gate(9, g, scoring, false, 0);
      equal.fills = {{"logits", exponents(0, 0)}, {"bias", exponents(0, 0)}};
      t.cases.push_back(equal);
    }
  // No tokens, one token, K = E.
  t.cases.push_back(gate(0, configs[10], "sigmoid", true, 0));
  t.cases.push_back(gate(1, configs[1], "softmax", true, 1));
  t.cases.push_back(gate(3, Config{0, 0, 8, 0, 8}, "sqrtsoftplus", false, 0));
  // TileKernels' benchmark: 32 tokens and 4 padded (masked), 4001 and 10.
  for (int64_t tokens : {36, 4011}) {
    Case bench = gate(tokens, configs[10], "sigmoid", true, 1, Case::bench);
    bench.set["fix_routing_mask"] = bench.set["unmapped_topk_idx"] =
        bench.set["unmapped_out"] = "none";
    bench.peer_us = tokens == 36 ? 7.28 : 11.64;
    t.cases.push_back(bench);
  }

  const auto logits = fake(DType::f32, {10, 64});
  const auto bias = fake(DType::f32, {64}, {}, 0x20000);
  const auto idx = fake(DType::i64, {10, 6}, {}, 0x30000);
  const auto weights = fake(DType::f32, {10, 6}, {}, 0x40000);
  const auto none = ops::absent();
  const auto map = fake(DType::i32, {64, 3}, {}, 0x50000);
  const auto count = fake(DType::i32, {64}, {}, 0x60000);
  const auto flags = fake(DType::boolean, {10}, {}, 0x80000);
  const std::map<std::string, ops::ParamValue> six = {
      {"num_topk", int64_t{6}},
      {"num_groups", int64_t{0}},
      {"num_topk_groups", int64_t{0}}};
  auto with = [&](std::map<std::string, ops::ParamValue> extra) {
    extra.insert(six.begin(), six.end());
    return extra;
  };
  t.errors = {
      {"a map without counts",
       {logits, bias, none, none, map, none, none, idx, weights, none},
       six,
       "top2_sum_gate: argument 'to_physical_map' is given without "
       "'logical_count'; requires both"},
      {"fixed routing without the picks",
       {logits, bias, none, flags, none, none, none, idx, weights, none},
       six,
       "top2_sum_gate: argument 'fix_routing_mask' is given without "
       "'unmapped_topk_idx'; requires both"},
      {"a map of the wrong rows",
       {logits, bias, none, none, map, count, none, fake(DType::i64, {10, 10}),
        fake(DType::f32, {10, 10}), none},
       {{"num_topk", int64_t{8}},
        {"num_groups", int64_t{0}},
        {"num_topk_groups", int64_t{0}},
        {"use_shared_as_routed", true},
        {"num_shared_experts", int64_t{2}}},
       "top2_sum_gate: argument 'to_physical_map' has 64 rows; requires E + "
       "S = 66 (a row a logical expert, the shared ones too)"},
      {"groups of 12 experts",
       {fake(DType::f32, {10, 96}), fake(DType::f32, {96}, {}, 0x20000), none,
        none, none, none, none, idx, weights, none},
       {{"num_topk", int64_t{6}},
        {"num_groups", int64_t{8}},
        {"num_topk_groups", int64_t{4}}},
       "top2_sum_gate: argument 'num_groups' is 8 (12 experts per group); "
       "requires a power of two experts per group when grouping (on the "
       "GPU)"},
      {"more shared experts than extra ones",
       {logits, bias, none, none, none, none, none, fake(DType::i64, {10, 9}),
        fake(DType::f32, {10, 9}), none},
       {{"num_topk", int64_t{8}},
        {"num_groups", int64_t{0}},
        {"num_topk_groups", int64_t{0}},
        {"use_shared_as_routed", true},
        {"num_shared_experts", int64_t{1}}},
       "top2_sum_gate: argument 'num_shared_experts' is 1; requires at most "
       "the 0 extra experts of 'to_physical_map' (its columns - 1; 0 without "
       "it)"},
      {"a TP rank past the ranks",
       {logits, bias, none, none, none, none, none, idx, weights, none},
       with({{"tp_rank", int64_t{2}}, {"num_tp_ranks", int64_t{2}}}),
       "top2_sum_gate: argument 'tp_rank' is 2; requires 0 <= tp_rank < "
       "num_tp_ranks = 2"},
      {"experts not a multiple of 4",
       {fake(DType::f32, {10, 66}), fake(DType::f32, {66}, {}, 0x20000), none,
        none, none, none, none, idx, weights, none},
       six,
       "top2_sum_gate: argument 'logits' has shape [10, 66] (E = 66); "
       "requires 4 <= E <= 1024 and E a multiple of 4"},
      {"identity scoring",
       {logits, bias, none, none, none, none, none, idx, weights, none},
       with({{"scoring_func", std::string("identity")}}),
       "top2_sum_gate: argument 'scoring_func' is 'identity'; requires "
       "sigmoid, sqrtsoftplus, or softmax"},
      {"weights of the wrong width",
       {logits, bias, none, none, none, none, none, idx,
        fake(DType::f32, {10, 5}, {}, 0x40000), none},
       six,
       "top2_sum_gate: argument 'topk_weights' is f32[10, 5] strides [5, 1]; "
       "requires f32[10, 6]"},
      {"picks of the wrong width",
       {logits, bias, none, flags, none, none, fake(DType::i64, {10, 5}), idx,
        weights, none},
       six,
       "top2_sum_gate: argument 'unmapped_topk_idx' has shape [10, 5]; "
       "requires [T, num_topk] = [10, 6]"},
  };
  return t;
}

} // namespace tilejit::harness
