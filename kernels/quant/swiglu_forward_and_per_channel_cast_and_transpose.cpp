// swiglu_forward_and_per_channel_cast_and_transpose.cpp - the SwiGLU forward
// cast per channel declared, on per_channel_cast's kernel and tiles (256
// threads, 128 x 64 transposed, 128 x 128 straight) over x's halves.
#include "quant/swiglu_forward_and_per_channel_cast_and_transpose.h"
#include "quant/per_channel_cast.h"
#include "quant/reference.h"

#include "common/check.h"
#include "op/op.h"
#include "quant/swiglu_halves.h"

namespace tilejit::quant {

static void check(const ops::Call &c) {
  const int64_t bm = c.integer("num_per_tokens");
  if (bm != 32 && bm != 128)
    throw UserError(fmt::format("{}: argument 'num_per_tokens' is {}; "
                                "requires 32 or 128",
                                c.op().name, bm));
}

static PerChannelCastSpec spec(const ops::Call &c) {
  PerChannelCastSpec s;
  s.bm = static_cast<int32_t>(c.integer("num_per_tokens"));
  s.round_sf = c.flag("round_sf");
  s.transpose = !c.flag("without_transpose");
  s.block_k = s.transpose ? 64 : 128;
  s.vector_bytes = ops::vector_bytes(c, {"x"});
  s.swiglu = 1;
  s.clamp = c.real("swiglu_clamp_value") > 0;
  // Transposed, the bf16 activation is transposed first. 128 rows a scale:
  // the activation 64 (transposed) or 32 rows at a time through shared
  // memory, and (transposed) 64 registers for 4 blocks an SM (H200,
  // TileKernels' 8064 x 2048 benchmark: 48.9 -> 36.2 us, 32.6 with whole
  // tiles unchecked; TileKernels 32.54; chunks of 32 rows 37.8; not
  // transposed 254 -> 109 registers). 32 rows a scale: the whole
  // activation in registers (transposed: 71.1 -> 43.8 us, 36.8 unchecked;
  // 4 blocks an SM 51.2); not transposed, the shared tile would not fit
  // beside the scales' conversions.
  if (s.bm == 128) {
    s.swiglu_chunk = s.transpose ? 64 : 32;
    s.min_blocks = s.transpose ? 4 : 0;
  }
  s.inside = c.dim("M") % s.block_m == 0 && c.dim("W") / 2 % s.block_k == 0;
  return s;
}

static void views(const ops::Call &c, const PerChannelCastSpec &s,
                  ops::KernelArgs &args) {
  bind_swiglu_halves(c.tensor("x"), args);
  if (s.transpose)
    bind_transposed_sf(c, args);
}

static std::vector<ref::HostTensor> reference(const ops::HostCall &c) {
  std::optional<float> clamp;
  if (c.real("swiglu_clamp_value") > 0)
    clamp = static_cast<float>(c.real("swiglu_clamp_value"));
  QuantTensor q = swiglu_forward_and_per_channel_cast_and_transpose_ref(
      c.tensor("x"), c.choice("fmt"), c.integer("num_per_tokens"),
      c.flag("round_sf"), c.flag("without_transpose"), clamp);
  return {q.data, q.sf};
}

const ops::OpDef &swiglu_forward_and_per_channel_cast_and_transpose_op() {
  static const ops::OpDef op = ops::make_op<PerChannelCastSpec>(
      {.name = "swiglu_forward_and_per_channel_cast_and_transpose",
       .summary = "SwiGLU of bf16 x (M, 2H) = (gate | up) rounded to bf16, "
                  "cast to e4m3 with a scale per column per 32 or 128 rows, "
                  "written transposed (H, M)",
       .tensors = {ops::input("x", {DType::bf16}, "M, W",
                              ops::Layout::contiguous, "(gate | up), W = 2H"),
                   ops::output("out", {DType::e4m3}, "",
                               ops::Layout::contiguous,
                               "e4m3 (H, M), or (M, H) without_transpose"),
                   ops::output("out_sf", {DType::f32}, "",
                               ops::Layout::contiguous,
                               "f32 (M / num_per_tokens, H)")},
       .params = {ops::choice("fmt", "e4m3", {"e4m3"}, "the output format"),
                  ops::integer("num_per_tokens", 128, 1, 1 << 30,
                               "rows a scale covers: 32 or 128"),
                  ops::flag("round_sf", false,
                            "scales rounded up to powers of two"),
                  ops::flag("without_transpose", false, "out is (M, H)"),
                  ops::real("swiglu_clamp_value", 0.0, 0.0,
                            "the clamp C of gate (above) and up (both "
                            "sides); 0: None")},
       .dim_rules = {{.dim = "M", .multiple = 128},
                     {.dim = "W", .min = 128, .multiple = 128}},
       .cli_shape = "M, W",
       // TileKernels' benchmark: 8064 tokens, H = 2048.
       .default_shape = {8064, 4096},
       .check = check,
       .shape_of =
           [](std::string_view tensor, const ops::ShapeArgs &a) {
             const int64_t m = a.dim("M"), h = a.dim("W") / 2;
             if (tensor == "out")
               return a.flag("without_transpose")
                          ? ops::TensorShape{DType::e4m3, {m, h}, {h, 1}}
                          : ops::TensorShape{DType::e4m3, {h, m}, {m, 1}};
             const int64_t rows = m / a.integer("num_per_tokens");
             return ops::TensorShape{DType::f32, {rows, h}, {h, 1}};
           },
       .reference = reference},
      {spec, per_channel_cast_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(swiglu_forward_and_per_channel_cast_and_transpose_op);

void swiglu_forward_and_per_channel_cast_and_transpose(
    const rt::TensorView &x, std::string_view fmt, int64_t num_per_tokens,
    const rt::TensorView &out, const rt::TensorView &out_sf, bool round_sf,
    bool without_transpose, std::optional<float> swiglu_clamp_value,
    CUstream stream) {
  if (swiglu_clamp_value && !(*swiglu_clamp_value > 0))
    throw UserError(fmt::format(
        "swiglu_forward_and_per_channel_cast_and_transpose: argument "
        "'swiglu_clamp_value' is {}; requires a positive value or None",
        *swiglu_clamp_value));
  swiglu_forward_and_per_channel_cast_and_transpose_op().call(
      {x, out, out_sf},
      {std::string(fmt), num_per_tokens, round_sf, without_transpose,
       swiglu_clamp_value.value_or(0.0f)},
      stream);
}

} // namespace tilejit::quant
