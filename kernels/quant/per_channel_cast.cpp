// per_channel_cast.cpp - per_channel_cast and per_channel_cast_and_transpose
// declared: bf16/f32 (M, K) to e4m3 with a scale per column per bm rows;
// one kernel of 256 threads, 128 x 128 tiles (128 x 64 transposed).
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
  s.vector_bytes = ops::rows_aligned(c.tensor("x"), 16) ? 16 : 0;
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
