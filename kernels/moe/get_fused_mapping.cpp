// get_fused_mapping.cpp - get_fused_mapping declared: i64 expert ids (T, K)
// to the fused layout's seven i32 maps. Two kernels with a scratch of
// per-block expert counts between them (the second needs every block's
// counts: a grid-wide step without a cooperative launch).
#include "moe/get_fused_mapping.h"
#include "moe/reference.h"

#include "op/op.h"

#include <algorithm>
#include <bit>
#include <limits>

namespace tilejit::moe {

namespace {

FusedMappingSpec spec(const ops::Call &c) {
  FusedMappingSpec s;
  const int64_t e = c.integer("num_experts");
  s.experts = static_cast<int32_t>(e);
  // The experts' tables in chunks of 32 columns (a row a warp: a thread's
  // worth of elements; the place kernel sums the scratch's rows of a chunk
  // a thread's worth of them at a time).
  s.width = 32;
  s.chunks = static_cast<int32_t>((e + s.width - 1) / s.width);
  // 8 warps of 4 sub-batches of 32 a step: a block takes 1024 entries a
  // step, and up to 256 blocks take one step each before any takes two (at
  // TileKernels' benchmark shape on an H100, 14.4 us; 14.5-14.9 with 128 or
  // 512 threads, 2 or 8 sub-batches, 256 blocks; 24-25 with 1024 threads
  // or 16 sub-batches, measured before the place kernel's early count).
  s.threads = 256;
  s.per = 4;
  const int64_t entries = c.tensor("topk_idx").numel();
  const int64_t step = int64_t{s.threads} * s.per;
  s.blocks = static_cast<int32_t>(
      std::clamp<int64_t>((entries + step - 1) / step, 1, 256));
  return s;
}

/// The flat views the kernels index.
void views(const ops::Call &c, const FusedMappingSpec &, ops::KernelArgs &a) {
  a.flat("flat_topk_idx", c.tensor("topk_idx"));
  a.flat("flat_token_topk_to_pos", c.tensor("token_topk_to_pos"));
}

/// Row b: block b's count of each expert (chunks x width columns).
ops::TensorShape scratch(const ops::Call &, const FusedMappingSpec &s) {
  const int64_t cols = int64_t{s.chunks} * s.width;
  return {DType::i32, {s.blocks, cols}, {cols, 1}};
}

/// The position count that holds every segment of any ids:
/// align_down(T K + (alignment - 1) E, alignment) (TileKernels' bound).
int64_t position_bound(int64_t entries, int64_t experts, int64_t alignment) {
  return (entries + (alignment - 1) * experts) / alignment * alignment;
}

/// The pos_to_* maps (N,): N = num_expanded_tokens, or the bound where it
/// is 0.
ops::TensorShape positions(std::string_view, const ops::ShapeArgs &a) {
  const int64_t n = a.integer("num_expanded_tokens");
  return {
      DType::i32,
      {n > 0 ? n
             : position_bound(a.dim("T") * a.dim("K"), a.integer("num_experts"),
                              a.integer("alignment"))},
      {1}};
}

void check(const ops::Call &c) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  if (c.tensor("topk_idx").numel() > kMax)
    throw UserError(fmt::format(
        "{}: argument 'topk_idx' has shape [{}, {}]; requires fewer than 2^31 "
        "entries (the maps are int32)",
        c.op().name, c.dim("T"), c.dim("K")));
  const int64_t bound =
      position_bound(c.dim("T") * c.dim("K"), c.integer("num_experts"),
                     c.integer("alignment"));
  if (c.integer("num_expanded_tokens") == 0 && bound > kMax)
    throw UserError(fmt::format(
        "{}: argument 'num_expanded_tokens' is 0, whose bound {} needs "
        "2^31 positions or more; requires a count below 2^31 (the maps are "
        "int32)",
        c.op().name, bound));
}

} // namespace

const ops::OpDef &get_fused_mapping_op() {
  static const ops::OpDef op = ops::make_op<FusedMappingSpec>(
      {.name = "get_fused_mapping",
       .summary = "MoE routing's fused (expert-major) layout: each expert's "
                  "aligned segment of positions holding its (t, k) entries "
                  "in order, and the maps between positions and entries (i32)",
       .tensors = {ops::input("topk_idx", {DType::i64}, "T, K",
                              ops::Layout::contiguous,
                              "experts of each token's slots, -1: unused"),
                   ops::output("pos_to_expert", {DType::i32}, "",
                               ops::Layout::contiguous,
                               "(N): num_expanded_tokens, or its bound"),
                   ops::output("pos_to_token", {DType::i32}, ""),
                   ops::output("pos_to_token_topk", {DType::i32}, ""),
                   ops::output("token_topk_to_pos", {DType::i32}, "T, K"),
                   ops::output("expert_start", {DType::i32}, "num_experts"),
                   ops::output("expert_end", {DType::i32}, "num_experts"),
                   ops::output("num_tokens_per_expert", {DType::i32},
                               "num_experts", ops::Layout::contiguous,
                               "aligned counts")},
       .params = {ops::integer("num_experts", 32, 1, 1024, "experts"),
                  ops::integer("alignment", 128, 1, 1 << 20,
                               "each segment's length a multiple of it"),
                  ops::integer(
                      "num_expanded_tokens", 0, 0,
                      std::numeric_limits<int32_t>::max(),
                      "positions N, at least the sum of the aligned counts; "
                      "0: the bound align_down(T K + (alignment - 1) "
                      "num_experts, alignment)")},
       .cli_shape = "T, K",
       // TileKernels' benchmark: top 8 of 32 experts a rank of 8.
       .default_shape = {21760, 8},
       .check = check,
       .shape_of = positions,
       .reference =
           [](const ops::HostCall &c) {
             FusedMapping m = get_fused_mapping_ref(
                 c.tensor("topk_idx"), c.integer("num_experts"),
                 c.output("pos_to_expert").shape[0], c.integer("alignment"),
                 /*force_no_sync=*/true);
             return std::vector{m.pos_to_expert,        m.pos_to_token,
                                m.pos_to_token_topk,    m.token_topk_to_pos,
                                m.expert_start,         m.expert_end,
                                m.num_tokens_per_expert};
           }},
      {.spec = spec,
       .kernel = get_fused_mapping_count_kernel,
       .views = views,
       .then = {get_fused_mapping_place_kernel},
       .scratch = scratch});
  return op;
}
TILEJIT_REGISTER_OP(get_fused_mapping_op);

void get_fused_mapping(const rt::TensorView &topk_idx, int64_t num_experts,
                       int64_t alignment, const rt::TensorView &pos_to_expert,
                       const rt::TensorView &pos_to_token,
                       const rt::TensorView &pos_to_token_topk,
                       const rt::TensorView &token_topk_to_pos,
                       const rt::TensorView &expert_start,
                       const rt::TensorView &expert_end,
                       const rt::TensorView &num_tokens_per_expert,
                       CUstream stream) {
  get_fused_mapping_op().call({topk_idx, pos_to_expert, pos_to_token,
                               pos_to_token_topk, token_topk_to_pos,
                               expert_start, expert_end, num_tokens_per_expert},
                              {num_experts, alignment}, stream);
}

} // namespace tilejit::moe
