// top2_sum_gate_errors_test.cpp - Every argument check of top2_sum_gate,
// one deliberate mistake per CHECK.
#include "moe_test_util.h"

#include "tilejit/error.h"

#include <catch2/catch.hpp>

using namespace moe_test;
using namespace tilejit::moe;

namespace {

const std::string fn = "top2_sum_gate_ref: ";

/// A valid call with 8 experts, K = 2, no groups, one rank each; the
/// arguments under test are overridden by the caller.
struct Call {
  HostTensor logits = HostTensor::zeros(DType::f32, {2, 8});
  HostTensor bias = HostTensor::zeros(DType::f32, {8});
  int64_t topk = 2, topk_groups = 0, groups = 0;
  bool use_shared = false;
  int64_t shared = 0;
  int64_t ep_rank = 0, ep_ranks = 1, tp_rank = 0, tp_ranks = 1;
  std::string scoring = "sigmoid";
  std::optional<HostTensor> mask, fix, map, count, unmapped;
  Top2SumGateResult operator()() const {
    return top2_sum_gate_ref(logits, bias, topk, topk_groups, groups,
                             use_shared, shared, 1.0f, ep_rank, ep_ranks,
                             tp_rank, tp_ranks, scoring, mask, fix, map, count,
                             unmapped);
  }
};

/// An identity map for E + S logical experts with `extra` extra columns.
std::pair<HostTensor, HostTensor> identity_map(int64_t logical, int64_t extra) {
  std::vector<int32_t> map;
  for (int32_t l = 0; l < logical; ++l)
    for (int64_t c = 0; c <= extra; ++c)
      map.push_back(l);
  return {i32({logical, extra + 1}, map),
          i32({logical}, std::vector<int32_t>(logical, 1))};
}

} // namespace

TEST_CASE("top2_sum_gate checks its tensors", "[ref][moe]") {
  Call c;
  CHECK_NOTHROW(c());
  c.logits = HostTensor::zeros(DType::bf16, {2, 8});
  CHECK_THROWS_WITH(c(), fn + "argument 'logits' has dtype bf16; requires f32");
  c.logits = HostTensor::zeros(DType::f32, {8});
  CHECK_THROWS_WITH(c(), fn + "argument 'logits' has shape [8]; requires a "
                              "2-D tensor");
  c.logits = HostTensor::zeros(DType::f32, {8, 2}).transposed(0, 1);
  CHECK_THROWS_WITH(c(), fn + "argument 'logits' has shape [2, 8] and strides "
                              "[1, 2]; requires a contiguous tensor");
  c = Call{};
  c.bias = HostTensor::zeros(DType::f32, {7});
  CHECK_THROWS_WITH(c(), fn + "argument 'bias' has shape [7]; requires [8] (E, "
                              "the columns of 'logits')");
  c.logits = HostTensor::zeros(DType::f32, {2, 6});
  c.bias = HostTensor::zeros(DType::f32, {6});
  CHECK_THROWS_WITH(c(), fn + "argument 'logits' has shape [2, 6]; requires a "
                              "number of experts that is a multiple of 4");
  c = Call{};
  c.mask = HostTensor::zeros(DType::i32, {2});
  CHECK_THROWS_WITH(c(), fn + "argument 'mask' has dtype i32; requires bool");
  c.mask = boolean({1, 1, 1});
  CHECK_THROWS_WITH(c(), fn + "argument 'mask' has shape [3]; requires [2] (T, "
                              "the rows of 'logits')");
  c = Call{};
  auto [map, count] = identity_map(8, 2);
  c.map = map;
  CHECK_THROWS_WITH(c(), fn + "argument 'to_physical_map' is given without "
                              "'logical_count'; requires both or neither");
  c.map.reset();
  c.count = count;
  CHECK_THROWS_WITH(c(), fn + "argument 'logical_count' is given without "
                              "'to_physical_map'; requires both or neither");
  c.map = HostTensor::zeros(DType::i64, {8, 3});
  CHECK_THROWS_WITH(c(), fn + "argument 'to_physical_map' has dtype i64; "
                              "requires i32");
  c.map = HostTensor::zeros(DType::i32, {9, 3});
  CHECK_THROWS_WITH(c(), fn + "argument 'to_physical_map' has shape [9, 3]; "
                              "requires [8, X + 1] (E + S logical experts, X "
                              "extra experts)");
  c.map = map;
  c.count = HostTensor::zeros(DType::i32, {9});
  CHECK_THROWS_WITH(c(), fn + "argument 'logical_count' has shape [9]; "
                              "requires [8] (E + S)");
}

TEST_CASE("top2_sum_gate checks top-k, groups, scoring and shared experts",
          "[ref][moe]") {
  Call c;
  c.topk = 0;
  CHECK_THROWS_WITH(c(), fn + "argument 'num_topk' is 0; requires 1 <= "
                              "num_topk <= 8 (the number of experts)");
  c.topk = 9;
  CHECK_THROWS_WITH(c(), fn + "argument 'num_topk' is 9; requires 1 <= "
                              "num_topk <= 8 (the number of experts)");
  c = Call{};
  c.groups = 4;
  CHECK_THROWS_WITH(c(), fn + "arguments 'num_groups' and 'num_topk_groups' "
                              "are 4 and 0; requires both zero or both "
                              "positive");
  c.groups = -1;
  c.topk_groups = -1;
  CHECK_THROWS_WITH(c(), fn + "arguments 'num_groups' and 'num_topk_groups' "
                              "are -1 and -1; requires both zero or both "
                              "positive");
  c.groups = 2;
  c.topk_groups = 4;
  CHECK_THROWS_WITH(c(), fn + "argument 'num_topk_groups' is 4; requires at "
                              "most num_groups = 2");
  c.groups = 3;
  c.topk_groups = 1;
  CHECK_THROWS_WITH(c(), fn + "argument 'num_groups' is 3; requires a divisor "
                              "of the 8 experts");
  c.groups = 4;
  c.topk = 3;
  CHECK_THROWS_WITH(c(), fn + "argument 'num_topk' is 3; requires at most "
                              "num_topk_groups * experts per group = 2");
  // 8 groups of one expert: a group has no top two.
  c = Call{};
  c.groups = 8;
  c.topk_groups = 4;
  CHECK_THROWS_WITH(c(), fn + "argument 'num_groups' is 8 (1 expert per "
                              "group); requires at least 2 experts per group "
                              "when grouping");
  c = Call{};
  c.logits = HostTensor::zeros(DType::f32, {2, 64});
  c.bias = HostTensor::zeros(DType::f32, {64});
  c.groups = 64;
  c.topk_groups = 1;
  CHECK_THROWS_WITH(c(), fn + "argument 'num_groups' is 64; requires at most "
                              "32 when grouping (num_groups != "
                              "num_topk_groups)");
  c.groups = 64;
  c.topk_groups = 64; // grouping skipped: no limit
  CHECK_NOTHROW(c());
  c.groups = 1;
  c.topk_groups = 1;
  CHECK_NOTHROW(c());
  c.groups = 2; // 2 groups of 32 experts: the largest allowed
  CHECK_NOTHROW(c());
  c.logits = HostTensor::zeros(DType::f32, {2, 128});
  c.bias = HostTensor::zeros(DType::f32, {128});
  CHECK_THROWS_WITH(c(), fn + "argument 'num_groups' is 2 (64 experts per "
                              "group); requires at most 32 experts per group "
                              "when grouping");
  c = Call{};
  c.scoring = "identity";
  CHECK_THROWS_WITH(c(), fn + "argument 'scoring_func' is 'identity'; "
                              "requires 'sigmoid', 'sqrtsoftplus' or "
                              "'softmax' (identity is not supported here)");
  c.scoring = "relu";
  CHECK_THROWS_WITH(c(), fn + "argument 'scoring_func' is 'relu'; requires "
                              "'sigmoid', 'sqrtsoftplus' or 'softmax'");
  c = Call{};
  c.shared = 5; // ignored without use_shared_as_routed
  CHECK(c().topk_idx.shape() == std::vector<int64_t>{2, 2});
  c.use_shared = true;
  CHECK_THROWS_WITH(c(), fn + "argument 'num_shared_experts' is 5; requires 1 "
                              "or 2 when use_shared_as_routed");
  c.shared = 0;
  CHECK_THROWS_WITH(c(), fn + "argument 'num_shared_experts' is 0; requires 1 "
                              "or 2 when use_shared_as_routed");
  c.shared = 2;
  c.topk = 3;
  CHECK_THROWS_WITH(c(), fn + "argument 'num_shared_experts' is 2; requires a "
                              "divisor of num_topk = 3");
  c.topk = 6;
  CHECK_THROWS_WITH(c(), fn + "argument 'num_topk' is 6 with 2 shared "
                              "experts; requires the 8 experts to be a "
                              "multiple of num_topk / num_shared_experts = 3");
  c.topk = 2;
  CHECK_THROWS_WITH(c(), fn + "argument 'num_shared_experts' is 2; requires "
                              "at most the 0 extra experts of "
                              "'to_physical_map' (its columns - 1; 0 without "
                              "it)");
  auto [map, count] = identity_map(10, 1);
  c.map = map;
  c.count = count;
  CHECK_THROWS_WITH(c(), fn + "argument 'num_shared_experts' is 2; requires "
                              "at most the 1 extra experts of "
                              "'to_physical_map' (its columns - 1; 0 without "
                              "it)");
  c = Call{};
  c.logits = HostTensor::zeros(DType::f32, {2, 32});
  c.bias = HostTensor::zeros(DType::f32, {32});
  c.topk = 32;
  c.use_shared = true;
  c.shared = 1;
  CHECK_THROWS_WITH(c(), fn + "arguments 'num_topk' and 'num_shared_experts' "
                              "give 33 slots; requires at most 32 (one warp "
                              "lane per slot)");
}

TEST_CASE("top2_sum_gate checks unmapped_topk_idx, the fixed-routing mask "
          "and the ranks",
          "[ref][moe]") {
  Call c;
  c.unmapped = HostTensor::zeros(DType::i32, {2, 2});
  CHECK_THROWS_WITH(c(), fn + "argument 'unmapped_topk_idx' has dtype i32; "
                              "requires i64");
  c.unmapped = HostTensor::zeros(DType::i64, {2, 3});
  CHECK_THROWS_WITH(c(), fn + "argument 'unmapped_topk_idx' has shape [2, 3]; "
                              "requires [2, 2] (T, num_topk)");
  c.unmapped = HostTensor::zeros(DType::i64, {2, 2}).transposed(0, 1);
  CHECK_THROWS_WITH(c(), fn + "argument 'unmapped_topk_idx' has stride[1] = "
                              "2; requires 1");
  c.unmapped.reset();
  c.fix = boolean({0, 0});
  CHECK_THROWS_WITH(c(), fn + "argument 'fix_routing_mask' is given without "
                              "'unmapped_topk_idx'; requires both");
  c.unmapped = HostTensor::zeros(DType::i64, {2, 2});
  c.fix = HostTensor::zeros(DType::u8, {2});
  CHECK_THROWS_WITH(c(), fn + "argument 'fix_routing_mask' has dtype u8; "
                              "requires bool");
  c = Call{};
  c.ep_ranks = 0;
  CHECK_THROWS_WITH(c(), fn + "argument 'num_ep_ranks' is 0; requires >= 1");
  c.ep_ranks = 2;
  c.ep_rank = 2;
  CHECK_THROWS_WITH(c(), fn + "argument 'ep_rank' is 2; requires 0 <= "
                              "ep_rank < num_ep_ranks = 2");
  c.ep_rank = 0;
  c.tp_ranks = 0;
  CHECK_THROWS_WITH(c(), fn + "argument 'num_tp_ranks' is 0; requires >= 1");
  c.tp_ranks = 2;
  c.tp_rank = -1;
  CHECK_THROWS_WITH(c(), fn + "argument 'tp_rank' is -1; requires 0 <= "
                              "tp_rank < num_tp_ranks = 2");
  c.tp_rank = 0;
  c.ep_ranks = 9;
  CHECK_THROWS_WITH(c(), fn + "argument 'num_ep_ranks' is 9; requires at most "
                              "the 8 physical experts (E + X), one or more "
                              "per rank");
}

TEST_CASE("top2_sum_gate checks the values it reads", "[ref][moe]") {
  Call c;
  c.logits = HostTensor::zeros(DType::f32, {2, 8});
  c.logits.at<float>({1, 3}) = NAN;
  CHECK_THROWS_WITH(c(), fn + "argument 'logits' holds nan at [1, 3]; "
                              "requires finite values");
  c.logits.at<float>({1, 3}) = -INFINITY;
  CHECK_THROWS_WITH(c(), fn + "argument 'logits' holds -inf at [1, 3]; "
                              "requires finite values");
  c.mask = boolean({1, 0}); // a masked token's logits are not read
  CHECK_NOTHROW(c());
  c = Call{};
  c.unmapped = i64({2, 2}, {8, 0, 0, 0});
  c.fix = boolean({1, 0});
  CHECK_THROWS_WITH(c(), fn + "argument 'unmapped_topk_idx' holds 8 at [0, 0] "
                              "of a fixed-routing token; requires an expert "
                              "index in [0, 8)");
  c.unmapped = i64({2, 2}, {0, -1, 0, 0});
  CHECK_THROWS_WITH(c(), fn + "argument 'unmapped_topk_idx' holds -1 at [0, "
                              "1] of a fixed-routing token; requires an "
                              "expert index in [0, 8)");
  c = Call{};
  auto [map, count] = identity_map(8, 2);
  c.map = map;
  c.count = count;
  c.count->at<int32_t>({0}) = 0; // expert 0 is picked first on equal scores
  CHECK_THROWS_WITH(c(), fn + "argument 'logical_count' holds 0 at [0]; "
                              "requires 1 to 3 (the columns of "
                              "'to_physical_map')");
  c.count->at<int32_t>({0}) = 4;
  CHECK_THROWS_WITH(c(), fn + "argument 'logical_count' holds 4 at [0]; "
                              "requires 1 to 3 (the columns of "
                              "'to_physical_map')");
  c.count->at<int32_t>({0}) = 1;
  c.map->at<int32_t>({1, 0}) = 10;
  CHECK_THROWS_WITH(c(), fn + "argument 'to_physical_map' holds 10 at [1, 0]; "
                              "requires a physical expert in [0, 10)");
}
