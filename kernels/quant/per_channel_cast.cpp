// per_channel_cast.cpp - per_channel_cast, per_channel_cast_fused and
// per_channel_cast_and_transpose declared: bf16/f32 (or e4m3 with 1 x 128
// scales, gathered rows: fused) to e4m3 with a scale per column per bm rows;
// one kernel of 256 threads, 128 x 128 tiles (128 x 256 with input scales,
// 128 x 64 transposed).
#include "quant/per_channel_cast.h"
#include "quant/reference.h"

#include "op/op.h"

namespace tilejit::quant {

template <bool transpose> static PerChannelCastSpec spec(const ops::Call &c) {
  PerChannelCastSpec s;
  s.in_dtype = c.tensor("x").dtype;
  s.bm = static_cast<int32_t>(c.integer("num_per_tokens"));
  s.round_sf = c.flag("round_sf");
  s.transpose = transpose;
  s.block_k = transpose ? 64 : 128;
  s.vector_bytes = ops::vector_bytes(c, {"x"});
  return s;
}

static void check(const ops::Call &c) {
  const int64_t bm = c.integer("num_per_tokens");
  const bool transpose = c.op().name == "per_channel_cast_and_transpose";
  if (bm != 128 && (!transpose || bm != 32))
    throw UserError(fmt::format("{}: argument 'num_per_tokens' is {}; "
                                "requires {}",
                                c.op().name, bm,
                                transpose ? "32 or 128" : "128"));
}

/// The scales: f32 (M / bm, K) row-major.
static ops::TensorShape sf_shape(std::string_view, const ops::ShapeArgs &a) {
  const int64_t k = a.dim("K");
  return {DType::f32, {a.dim("M") / a.integer("num_per_tokens"), k}, {k, 1}};
}

static ops::OpDef declare(std::string name, std::string summary,
                          std::vector<DType> in, std::string out_shape,
                          QuantTensor (*reference)(const HostTensor &,
                                                   std::string_view, int64_t,
                                                   bool)) {
  return {.name = std::move(name),
          .summary = std::move(summary),
          .tensors = {ops::input("x", std::move(in), "M, K",
                                 ops::Layout::contiguous),
                      ops::output("out", {DType::e4m3}, std::move(out_shape)),
                      ops::output("out_sf", {DType::f32}, "",
                                  ops::Layout::contiguous,
                                  "f32 (M / num_per_tokens, K)")},
          .params = {ops::choice("fmt", "e4m3", {"e4m3"}, "the output format"),
                     ops::integer("num_per_tokens", 128, 1, 1 << 30,
                                  "rows a scale covers"),
                     ops::flag("round_sf", false,
                               "scales rounded up to powers of two")},
          .dim_rules = {{.dim = "M", .multiple = 128},
                        {.dim = "K", .multiple = 64}},
          .cli_shape = "M, K",
          .default_shape = {8064, 7168},
          .check = check,
          .shape_of = sf_shape,
          .reference = [reference](const ops::HostCall &c) {
            QuantTensor q =
                reference(c.tensor("x"), c.choice("fmt"),
                          c.integer("num_per_tokens"), c.flag("round_sf"));
            return std::vector{q.data, q.sf};
          }};
}

const ops::OpDef &per_channel_cast_op() {
  static const ops::OpDef op = ops::make_op<PerChannelCastSpec>(
      declare("per_channel_cast",
              "fp8 e4m3 quantization of (M, K) bf16/f32 with a scale per "
              "column per 128 rows",
              {DType::bf16, DType::f32}, "M, K", per_channel_cast_ref),
      {spec<false>, per_channel_cast_kernel});
  return op;
}
TILEJIT_REGISTER_OP(per_channel_cast_op);

const ops::OpDef &per_channel_cast_and_transpose_op() {
  static const ops::OpDef op = ops::make_op<PerChannelCastSpec>(
      declare("per_channel_cast_and_transpose",
              "per_channel_cast of bf16 (32 or 128 rows a scale), written "
              "transposed (K, M)",
              {DType::bf16}, "K, M", per_channel_cast_and_transpose_ref),
      {spec<true>, per_channel_cast_kernel});
  return op;
}
TILEJIT_REGISTER_OP(per_channel_cast_and_transpose_op);

// --- per_channel_cast_fused -------------------------------------------------

static PerChannelCastSpec fused_spec(const ops::Call &c) {
  PerChannelCastSpec s;
  s.in_dtype = c.tensor("x").dtype;
  s.round_sf = c.flag("round_sf");
  s.x_sf = c.has("x_sf");
  s.gather = c.has("pos_to_token");
  s.block_k = s.x_sf ? 256 : 128; // the scales' fragment fills the threads
  s.vector_bytes = ops::vector_bytes(c, {"x"});
  return s;
}

static void check_fused(const ops::Call &c) {
  const std::string_view op = c.op().name;
  const int64_t bm = c.integer("num_per_tokens");
  if (bm != 128)
    throw UserError(fmt::format("{}: argument 'num_per_tokens' is {}; "
                                "requires 128",
                                op, bm));
  const bool quantized = c.has("x_sf");
  const DType x = c.tensor("x").dtype;
  const int64_t g = c.integer("num_per_channels");
  if (quantized != (x == DType::e4m3))
    throw UserError(fmt::format("{}: argument 'x' is {} {} x_sf; requires "
                                "{}",
                                op, name_of(x), quantized ? "with" : "without",
                                quantized ? "e4m3 with x_sf"
                                          : "bf16 or f32 without x_sf (e4m3 "
                                            "comes with its scales)"));
  if (quantized ? g != 128 : g != 0)
    throw UserError(fmt::format("{}: argument 'num_per_channels' is {} {} "
                                "x_sf; requires {}",
                                op, g, quantized ? "with" : "without",
                                quantized ? "128" : "0 (None)"));
  if (quantized && c.dim("K") % 128 != 0)
    throw UserError(fmt::format("{}: argument 'x' has K = {} columns; with "
                                "x_sf requires a multiple of 128",
                                op, c.dim("K")));
  const int64_t R = c.dim("R"), N = c.dim("N");
  if (c.has("pos_to_token") ? R % 16 != 0 : (R != N || N % 128 != 0))
    throw UserError(
        c.has("pos_to_token")
            ? fmt::format("{}: argument 'pos_to_token' has {} entries; "
                          "requires a multiple of 16",
                          op, R)
            : fmt::format("{}: argument 'out' has {} rows and x {}; without "
                          "pos_to_token requires the same rows, a multiple "
                          "of 128",
                          op, R, N));
}

/// x_sf: f32 (N, K / 128); out_sf: f32 (ceil(R / 128), K), row-major.
static ops::TensorShape fused_shape(std::string_view name,
                                    const ops::ShapeArgs &a) {
  const int64_t k = a.dim("K");
  if (name == "x_sf")
    return {DType::f32, {a.dim("N"), k / 128}, {k / 128, 1}};
  return {DType::f32, {(a.dim("R") + 127) / 128, k}, {k, 1}};
}

const ops::OpDef &per_channel_cast_fused_op() {
  static const ops::OpDef op = ops::make_op<PerChannelCastSpec>(
      {.name = "per_channel_cast_fused",
       .summary = "per_channel_cast of rows gathered by pos_to_token (-1: "
                  "zeros), of bf16/f32 or of e4m3 with 1x128 scales",
       .tensors = {ops::input("x", {DType::bf16, DType::f32, DType::e4m3},
                              "N, K", ops::Layout::contiguous),
                   ops::absent_by_default(ops::optional_input(
                       "x_sf", {DType::f32}, "", ops::Layout::contiguous,
                       "f32 (N, K / 128): x's scales, x e4m3")),
                   ops::optional_input("pos_to_token", {DType::i32}, "R",
                                       ops::Layout::contiguous,
                                       "out row r is x row pos_to_token[r]"),
                   ops::output("out", {DType::e4m3}, "R, K"),
                   ops::output("out_sf", {DType::f32}, "",
                               ops::Layout::contiguous,
                               "f32 (ceil(R / 128), K)")},
       .params = {ops::choice("fmt", "e4m3", {"e4m3"}, "the output format"),
                  ops::integer("num_per_tokens", 128, 1, 1 << 30,
                               "rows a scale covers"),
                  ops::flag("round_sf", false,
                            "scales rounded up to powers of two"),
                  ops::integer("num_per_channels", 0, 0, 1 << 30,
                               "x_sf's columns a scale covers: 128 with "
                               "x_sf, 0 (None) without")},
       .cli_shape = "R, N, K",
       .default_shape = {4096, 4096, 7168},
       .check = check_fused,
       .shape_of = fused_shape,
       .reference =
           [](const ops::HostCall &c) {
             CastInput x = c.tensor("x");
             if (c.has("x_sf"))
               x = QuantTensor{c.tensor("x"), c.tensor("x_sf")};
             std::optional<int64_t> g;
             if (c.has("x_sf"))
               g = c.integer("num_per_channels");
             std::optional<HostTensor> pos;
             if (c.has("pos_to_token"))
               pos = c.tensor("pos_to_token");
             QuantTensor q = per_channel_cast_fused_ref(
                 x, c.choice("fmt"), c.integer("num_per_tokens"),
                 c.flag("round_sf"), g, pos);
             return std::vector{q.data, q.sf};
           }},
      {fused_spec, per_channel_cast_kernel});
  return op;
}
TILEJIT_REGISTER_OP(per_channel_cast_fused_op);

void per_channel_cast_fused(const rt::TensorView &x, const rt::TensorView &x_sf,
                            const rt::TensorView &pos_to_token,
                            std::string_view fmt_name, int64_t num_per_tokens,
                            const rt::TensorView &out,
                            const rt::TensorView &out_sf, bool round_sf,
                            int64_t num_per_channels, CUstream stream) {
  per_channel_cast_fused_op().call(
      {x, x_sf, pos_to_token, out, out_sf},
      {std::string(fmt_name), num_per_tokens, round_sf, num_per_channels},
      stream);
}

void per_channel_cast(const rt::TensorView &x, std::string_view fmt_name,
                      int64_t num_per_tokens, const rt::TensorView &out,
                      const rt::TensorView &out_sf, bool round_sf,
                      CUstream stream) {
  per_channel_cast_op().call({x, out, out_sf},
                             {std::string(fmt_name), num_per_tokens, round_sf},
                             stream);
}

void per_channel_cast_and_transpose(const rt::TensorView &x,
                                    std::string_view fmt_name,
                                    int64_t num_per_tokens,
                                    const rt::TensorView &out,
                                    const rt::TensorView &out_sf, bool round_sf,
                                    CUstream stream) {
  per_channel_cast_and_transpose_op().call(
      {x, out, out_sf}, {std::string(fmt_name), num_per_tokens, round_sf},
      stream);
}

} // namespace tilejit::quant
