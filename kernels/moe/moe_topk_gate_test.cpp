// moe_topk_gate_test.cpp - moe_topk_gate_forward's case table: expert
// counts with tails, each option alone and all together (mask, bias, image
// bias, fixed routing, the physical map, shared experts, the scores and
// the picks as outputs), ties, no tokens, the benchmark shape, and
// mistakes. Every output is compared bytewise.
#include "op_test.h"

#include <string>
#include <string_view>

namespace tilejit::harness {

namespace {

/// --shape T x E, top `topk`, `shared` shared experts (0: not used), and
/// the optional tensors named in `passed`.
Case gate(int64_t tokens, int64_t experts, int64_t topk, int64_t shared,
          std::initializer_list<const char *> passed, int kind = Case::gpu) {
  Case c{.label = "",
         .shape = {tokens, experts},
         .set = {{"num_topk", std::to_string(topk)},
                 {"use_shared_as_routed", shared > 0 ? "true" : "false"},
                 {"num_shared_experts", std::to_string(shared)},
                 {"routed_scaling_factor", "2.5"},
                 {"ep_rank", "3"}},
         .kind = kind};
  for (const char *name : passed) {
    c.set[name] = "passed";
    if (std::string_view(name) == "to_physical_map") {
      c.set["logical_count"] = "passed";
      c.set["L"] = std::to_string(experts + shared);
      c.set["C"] = std::to_string(5); // (a literal trips GCC 12 -Wrestrict)
    }
    if (std::string_view(name) == "image_bias")
      c.set["image_token_mask"] = "passed";
    if (std::string_view(name) == "fix_routing_mask")
      c.set["unmapped_topk_idx"] = "passed";
  }
  return c;
}

} // namespace

TILEJIT_OP_TEST(moe_topk_gate_forward) {
  OpTest t{.op = "moe_topk_gate_forward",
           .fills = {{"bias", normal(0, 0.1)},
                     {"image_bias", normal(0, 0.1)},
                     {"mask", bytes_in(0, 1)},
                     {"image_token_mask", bytes_in(0, 1)},
                     {"fix_routing_mask", bytes_in(0, 1)},
                     {"to_physical_map", row_indices("logits", 0)},
                     {"logical_count", integers(1, 5)},
                     {"unmapped_topk_idx", ids_below("E", 0)}}};
  const std::initializer_list<const char *> all = {"mask",
                                                   "bias",
                                                   "image_bias",
                                                   "fix_routing_mask",
                                                   "to_physical_map",
                                                   "unmapped_out",
                                                   "scores"};
  for (auto [experts, topk] : {std::pair<int64_t, int64_t>{16, 6},
                               {72, 6},
                               {96, 8},
                               {256, 8},
                               {384, 8}}) {
    t.cases.push_back(gate(37, experts, topk, 0, {}));
    t.cases.push_back(gate(37, experts, topk, 2, all));
    t.cases.push_back(gate(4001, experts, topk, 1, all, Case::big));
  }
  for (const char *one : all)
    t.cases.push_back(gate(19, 256, 8, 0, {one}));
  // Ties everywhere, all-equal logits, no tokens, K = E.
  Case tied = gate(37, 256, 8, 2, all);
  tied.fills = {{"logits", exponents(-2, 2)}, {"bias", exponents(-3, -1)}};
  t.cases.push_back(tied);
  Case equal = gate(9, 72, 6, 0, {"bias"});
  equal.fills = {{"logits", exponents(0, 0)}, {"bias", exponents(0, 0)}};
  t.cases.push_back(equal);
  t.cases.push_back(gate(0, 256, 8, 2, all));
  t.cases.push_back(gate(3, 8, 8, 0, {"scores"}));
  t.cases.push_back(
      gate(4096, 256, 8, 1, {"bias", "to_physical_map"}, Case::bench));

  const auto logits = fake(DType::f32, {10, 64});
  const auto idx = fake(DType::i64, {10, 6}, {}, 0x30000);
  const auto weights = fake(DType::f32, {10, 6}, {}, 0x40000);
  const auto none = ops::absent();
  const auto flags = fake(DType::boolean, {10}, {}, 0x80000);
  const auto vec = fake(DType::f32, {64}, {}, 0x20000);
  const std::map<std::string, ops::ParamValue> six = {{"num_topk", int64_t{6}}};
  t.errors = {
      {"forced-random tokens",
       {logits, none, none, none, none, none, none, none, none, flags, idx,
        weights, none, none},
       six,
       "moe_topk_gate_forward: argument 'force_random' is given; requires "
       "none (its cuRAND Philox draws are not reproduced yet)"},
      {"an image bias without the image tokens",
       {logits, none, none, vec, none, none, none, none, none, none, idx,
        weights, none, none},
       six,
       "moe_topk_gate_forward: argument 'image_bias' is given without "
       "'image_token_mask'; requires both"},
      {"three shared experts",
       {logits, none, none, none, none, none, none, none, none, none,
        fake(DType::i64, {10, 9}, {}, 0x30000),
        fake(DType::f32, {10, 9}, {}, 0x40000), none, none},
       {{"num_topk", int64_t{6}},
        {"use_shared_as_routed", true},
        {"num_shared_experts", int64_t{3}}},
       "moe_topk_gate_forward: argument 'num_shared_experts' is 3 with "
       "use_shared_as_routed; requires 1 or 2"},
      {"a sigmoid router",
       {logits, none, none, none, none, none, none, none, none, none, idx,
        weights, none, none},
       {{"num_topk", int64_t{6}}, {"scoring_func", std::string("sigmoid")}},
       "moe_topk_gate_forward: argument 'scoring_func' is 'sigmoid'; "
       "requires sqrtsoftplus"},
      {"a map of the wrong rows",
       {logits, none, none, none, none, none,
        fake(DType::i32, {64, 3}, {}, 0x50000),
        fake(DType::i32, {64}, {}, 0x60000), none, none,
        fake(DType::i64, {10, 7}, {}, 0x30000),
        fake(DType::f32, {10, 7}, {}, 0x40000), none, none},
       {{"num_topk", int64_t{6}},
        {"use_shared_as_routed", true},
        {"num_shared_experts", int64_t{1}}},
       "moe_topk_gate_forward: argument 'to_physical_map' has 64 rows; "
       "requires E + S = 65 (routed and shared experts)"},
  };
  return t;
}

} // namespace tilejit::harness
