// per_token_cast_and_cast_back.cpp - per_token_cast_and_cast_back declared:
// x (M, K) cast per token to e4m3 or e2m1 and back to its dtype, in tiles
// of 2048 elements over 64 threads (TileKernels' tiling).
#include "quant/per_token_cast_and_cast_back.h"
#include "quant/reference.h"

#include "common/check.h"
#include "op/op.h"

#include <numeric>

namespace tilejit::quant {

static void check(const ops::Call &c) {
  const std::string &op = c.op().name;
  const int64_t g = c.integer("num_per_channels");
  if (g != 16 && g != 32 && g != 64 && g != 128)
    throw UserError(fmt::format("{}: argument 'num_per_channels' is {}; "
                                "requires 16, 32, 64 or 128",
                                op, g));
  if (c.dim("K") % g != 0)
    throw UserError(fmt::format("{}: argument 'x' has K = {}; requires K % "
                                "num_per_channels == 0 (num_per_channels = "
                                "{})",
                                op, c.dim("K"), g));
  if (c.flag("round_sf") && c.flag("use_e4m3_sf"))
    throw UserError(fmt::format("{}: arguments 'round_sf' and 'use_e4m3_sf' "
                                "are both true; requires at most one",
                                op));
}

/// block_k = gcd(2048, K) (K % 64 == 0, so at least 64 and a multiple of
/// every group), block_m the rows that make 2048 elements.
static CastAndCastBackSpec spec(const ops::Call &c) {
  CastAndCastBackSpec s;
  s.dtype = c.tensor("x").dtype;
  s.e2m1 = c.choice("fmt") == "e2m1";
  s.group = static_cast<int32_t>(c.integer("num_per_channels"));
  s.block_k = static_cast<int32_t>(std::gcd<int64_t>(2048, c.dim("K")));
  s.block_m = 2048 / s.block_k;
  s.round_sf = c.flag("round_sf");
  s.e4m3_sf = c.flag("use_e4m3_sf");
  s.vector_bytes = ops::vector_bytes(c, {"x", "out"});
  return s;
}

const ops::OpDef &per_token_cast_and_cast_back_op() {
  static const ops::OpDef op = ops::make_op<CastAndCastBackSpec>(
      {.name = "per_token_cast_and_cast_back",
       .summary = "x cast per token to e4m3 or e2m1 and back to its dtype "
                  "(fake quantization; out may be x); TileKernels 2.1",
       .tensors = {ops::input("x", {DType::bf16, DType::f32}, "M, K",
                              ops::Layout::inner_contiguous),
                   ops::output("out", {DType::bf16, DType::f32}, "",
                               ops::Layout::as_shaped, "x's dtype and shape")},
       .params = {ops::choice("fmt", "e4m3", {"e4m3", "e2m1"},
                              "the format of the round trip"),
                  ops::integer("num_per_channels", 128, 1, 1 << 30,
                               "channels a group: 16, 32, 64 or 128"),
                  ops::flag("round_sf", false,
                            "scales rounded up to powers of two"),
                  ops::flag("use_e4m3_sf", false,
                            "scales rounded to e4m3 (exclusive with "
                            "round_sf)")},
       .dim_rules = {{.dim = "K", .min = 64, .multiple = 64}},
       .cli_shape = "M, K",
       .default_shape = {8192, 7168},
       .check = check,
       .shape_of =
           [](std::string_view, const ops::ShapeArgs &a) {
             const int64_t m = a.dim("M"), k = a.dim("K");
             return ops::TensorShape{a.dtype("x"), {m, k}, {k, 1}};
           },
       .reference =
           [](const ops::HostCall &c) {
             return std::vector{per_token_cast_and_cast_back_ref(
                 c.tensor("x"), c.choice("fmt"), c.integer("num_per_channels"),
                 c.flag("round_sf"), c.flag("use_e4m3_sf"))};
           }},
      {spec, per_token_cast_and_cast_back_kernel});
  return op;
}
TILEJIT_REGISTER_OP(per_token_cast_and_cast_back_op);

void per_token_cast_and_cast_back(const rt::TensorView &x,
                                  const rt::TensorView &out,
                                  std::string_view fmt,
                                  int64_t num_per_channels, bool round_sf,
                                  bool use_e4m3_sf, CUstream stream) {
  per_token_cast_and_cast_back_op().call(
      {x, out}, {std::string(fmt), num_per_channels, round_sf, use_e4m3_sf},
      stream);
}

} // namespace tilejit::quant
