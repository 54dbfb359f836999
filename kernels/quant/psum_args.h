// psum_args.h - What TileKernels 2.1's SwiGLU ops on the psum row layout
// share on the host: the checks of their layout, weight and clamp
// arguments, the static experts bound of psum_dsl.h's masks, and the
// kernels' views of psum and of the per-row weights.
#pragma once

#include "common/check.h"
#include "op/op.h"

#include <algorithm>
#include <bit>
#include <optional>
#include <string_view>
#include <vector>

namespace tilejit::quant {

/// The declarations of the psum ops' optional row inputs, absent by
/// default: psum_num_tokens_per_expert, i32 (E,), documented by what the
/// op does with it (`padding`: zeroes the padding rows; else: computes the
/// experts' rows only), and topk_weights, f32 (T,).
inline ops::TensorDecl psum_input(bool padding) {
  return ops::absent_by_default(ops::optional_input(
      "psum_num_tokens_per_expert", {DType::i32}, "E", ops::Layout::contiguous,
      padding ? "padding rows: [psum[e], align(psum[e]))"
              : "expert e's rows: [align(psum[e - 1]), psum[e])"));
}
inline ops::TensorDecl row_weights_input() {
  return ops::absent_by_default(
      ops::optional_input("topk_weights", {DType::f32}, "T",
                          ops::Layout::contiguous, "each row's weight"));
}

/// `params` followed by the psum ops' routed_scaling_factor, clamp_value
/// (of the halves `first` above and `second` on both sides) and
/// token_alignment; 0 is None for the first two.
inline std::vector<ops::ParamDecl>
with_psum_params(std::vector<ops::ParamDecl> params, std::string_view first,
                 std::string_view second) {
  params.push_back(ops::real("routed_scaling_factor", 0.0, 0.0,
                             "times topk_weights (requires them); 0: None"));
  params.push_back(ops::real(
      "clamp_value", 0.0, 0.0,
      fmt::format("the clamp c of {} (above) and {} (both sides); 0: None",
                  first, second)));
  params.push_back(
      ops::integer("token_alignment", 128, 1, 1 << 20,
                   "where each expert's rows start: a power of two"));
  return params;
}

/// A reference's view of with_psum_params' two optional scalars (the
/// declarations' 0 is None).
struct PsumScalars {
  std::optional<float> routed_scaling_factor, clamp_value;
};
inline PsumScalars psum_scalars(const ops::HostCall &c) {
  PsumScalars s;
  if (const double rsf = c.real("routed_scaling_factor"); rsf != 0)
    s.routed_scaling_factor = static_cast<float>(rsf);
  if (const double clamp = c.real("clamp_value"); clamp > 0)
    s.clamp_value = static_cast<float>(clamp);
  return s;
}

/// UserError unless routed_scaling_factor comes with topk_weights,
/// clamped_count (where the op has it) with clamp_value, token_alignment
/// is a power of two and psum_num_tokens_per_expert has at most
/// `max_experts` experts.
inline void check_psum_args(const ops::Call &c, int64_t max_experts,
                            bool has_counts) {
  const std::string &op = c.op().name;
  if (c.real("routed_scaling_factor") != 0 && !c.has("topk_weights"))
    throw UserError(fmt::format("{}: argument 'routed_scaling_factor' is "
                                "given while 'topk_weights' is None; requires "
                                "weights",
                                op));
  if (has_counts && c.has("clamped_count") && c.real("clamp_value") == 0)
    throw UserError(fmt::format("{}: argument 'clamped_count' is given while "
                                "'clamp_value' is None; requires a clamp "
                                "value",
                                op));
  const int64_t a = c.integer("token_alignment");
  if (!std::has_single_bit(static_cast<uint64_t>(a)))
    throw UserError(fmt::format("{}: argument 'token_alignment' is {}; "
                                "requires a power of two",
                                op, a));
  if (c.has("psum_num_tokens_per_expert") && c.dim("E") > max_experts)
    throw UserError(fmt::format("{}: argument 'psum_num_tokens_per_expert' "
                                "has {} experts; requires at most {}",
                                op, c.dim("E"), max_experts));
}

/// The host entries' checks of their optional scalars (the declarations
/// take 0 for None): a positive clamp, a nonzero factor.
inline void check_psum_scalars(std::string_view op,
                               std::optional<float> routed_scaling_factor,
                               std::optional<float> clamp_value) {
  if (clamp_value && !(*clamp_value > 0))
    throw UserError(fmt::format("{}: argument 'clamp_value' is {}; requires "
                                "a positive value or None",
                                op, *clamp_value));
  if (routed_scaling_factor && !(*routed_scaling_factor != 0))
    throw UserError(fmt::format("{}: argument 'routed_scaling_factor' is {}; "
                                "requires a nonzero value or None",
                                op, *routed_scaling_factor));
}

/// psum_valid's / psum_padding's static `experts`: E up to a power of two,
/// and at least `at_least` (the block's threads, or more: psum_dsl.h).
inline int32_t psum_experts(const ops::Call &c, int64_t at_least) {
  const int64_t e = std::max<int64_t>(1, c.dim("E"));
  return static_cast<int32_t>(std::max<int64_t>(
      static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(e))), at_least));
}

/// The kernels' views: psum as "psum_rows" (1, E); topk_weights as
/// "weight_rows" (T, copies), stride 0 (each row's weight `copies` times,
/// one a thread), with the scalar routed_scaling_factor (1 for None).
inline void bind_psum(const ops::Call &c, ops::KernelArgs &args) {
  const int64_t e = c.dim("E");
  args.tensor("psum_rows", ops::view_as(c.tensor("psum_num_tokens_per_expert"),
                                        {1, e}, {e, 1}));
}
inline void bind_row_weights(const ops::Call &c, ops::KernelArgs &args,
                             int64_t copies) {
  args.tensor("weight_rows", ops::view_as(c.tensor("topk_weights"),
                                          {c.dim("T"), copies}, {1, 0}));
  const double rsf = c.real("routed_scaling_factor");
  args.scalar("routed_scaling_factor", rsf != 0 ? rsf : 1.0);
}

} // namespace tilejit::quant
