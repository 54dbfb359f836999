// norm_forward_and_per_token_cast.cpp - TileKernels 2.1's RMSNorm forward
// with the output cast per token (tk21_ops.md §3.10) declared: x bf16 or
// f32 (T, H), an optional weight (H,) and residual (h = x + residual,
// written to residual_out); y = (h * rstd) * (weight * out_scale) in x's
// dtype, quantized to e4m3 with a scale a 32 columns in per_token_cast's
// layouts (its bits those of per_token_cast(y)); when asked, y rounded once
// to bf16 (out_bf16) and rstd (T,).
#include "quant/norm_forward.h"
#include "quant/reference.h"
#include "quant/scale_layout.h"

#include "common/check.h"
#include "op/op.h"

#include <algorithm>

namespace tilejit::quant {

namespace {

using ops::Layout;

void check(const ops::Call &c) {
  const int64_t g = c.integer("num_per_channels");
  if (g != 32)
    throw UserError(fmt::format("{}: argument 'num_per_channels' is {}; "
                                "requires 32 (with fmt 'e4m3', the only "
                                "form TileKernels has)",
                                c.op().name, g));
  check_sf_flags(c);
  check_norm_residual(c);
  const int64_t bm = c.integer("mega_moe_block_m");
  if (c.has("mega_moe_sf") != (bm > 0))
    throw UserError(fmt::format(
        "{}: argument 'mega_moe_block_m' is {} while 'mega_moe_sf' is {}; "
        "requires both (a block of rows > 0) or neither",
        c.op().name, bm, c.has("mega_moe_sf") ? "passed" : "None"));
  if (bm > 0 && (!c.flag("use_packed_ue8m0") || c.dim("H") % 128 != 0))
    throw UserError(fmt::format(
        "{}: argument 'mega_moe_sf' is passed with use_packed_ue8m0={} and "
        "H = {}; requires packed UE8M0 scales and H a multiple of 128",
        c.op().name, c.flag("use_packed_ue8m0"), c.dim("H")));
}

NormForwardSpec spec(const ops::Call &c) {
  NormForwardSpec s = norm_forward_spec(c);
  s.cast = 1;
  s.round_sf = c.flag("round_sf") ? 1 : 0;
  s.sf_layout = sf_layout_of(c);
  s.out_bf16 = c.has("out_bf16") ? 1 : 0;
  s.mega = c.has("mega_moe_sf") ? 1 : 0;
  s.vector_bytes = ops::vector_bytes(
      c, {"x", "weight", "residual", "out", "out_bf16", "residual_out"});
  return s;
}

void views(const ops::Call &c, const NormForwardSpec &s,
           ops::KernelArgs &args) {
  bind_norm_rows(c, args);
  args.tensor("out_rows", c.tensor("out"));
  if (s.out_bf16)
    args.tensor("out_bf16_rows", c.tensor("out_bf16"));
  if (s.sf_layout == SfLayout::packed_ue8m0)
    args.tensor("out_sf", ops::as_bytes(c.tensor("out_sf")));
  if (s.mega)
    args.tensor("mega_moe_sf_bytes", ops::as_bytes(c.tensor("mega_moe_sf")));
}

std::vector<ref::HostTensor> reference(const ops::HostCall &c) {
  NormForwardCastResult r = norm_forward_and_per_token_cast_ref(
      c.tensor("x"), c.given("weight"), static_cast<float>(c.real("eps")),
      "e4m3", c.integer("num_per_channels"), c.given("residual"),
      static_cast<float>(c.real("out_scale")),
      c.flag("use_tma_aligned_col_major_sf"), c.flag("round_sf"),
      c.flag("use_packed_ue8m0"), c.has("out_bf16"));
  // mega_moe_sf: the packed scales' words of token t in row
  // mega_moe_row(t) (the other rows zero here; the kernel leaves them).
  ref::HostTensor mega;
  if (c.has("mega_moe_sf")) {
    const ops::TensorShape &m = c.output("mega_moe_sf");
    mega = ref::HostTensor::zeros_strided(m.dtype, m.shape, m.strides);
    const int64_t bm = c.integer("mega_moe_block_m");
    for (int64_t t = 0; t < r.out.sf.size(0); ++t)
      for (int64_t w = 0; w < r.out.sf.size(1); ++w)
        mega.at<int32_t>({mega_moe_row(t, bm), w}) =
            r.out.sf.at<int32_t>({t, w});
  }
  return {r.out.data,
          r.out.sf,
          r.out_bf16,
          c.has("residual") ? r.norm_input : ref::HostTensor{},
          c.has("rstd") ? r.rstd : ref::HostTensor{},
          mega};
}

} // namespace

const ops::OpDef &norm_forward_and_per_token_cast_op() {
  static const ops::OpDef op = ops::make_op<NormForwardSpec>(
      {.name = "norm_forward_and_per_token_cast",
       .summary = "RMSNorm of the rows of x (+ residual) cast per token to "
                  "e4m3, a scale a 32 columns",
       .tensors = {ops::input("x", {DType::bf16, DType::f32}, "T, H",
                              Layout::contiguous),
                   ops::optional(ops::input_like("weight", "x", "H",
                                                 Layout::contiguous,
                                                 "None: a unit weight"),
                                 true),
                   ops::optional(ops::input_like("residual", "x", "T, H",
                                                 Layout::contiguous,
                                                 "added to x first"),
                                 false),
                   ops::output("out", {DType::e4m3}, "", Layout::contiguous,
                               "e4m3 (T, H)"),
                   ops::output("out_sf", {DType::f32, DType::i32}, "",
                               Layout::as_shaped,
                               "scales (T, ceil(H / 32)); layout by the flags "
                               "(§3.3), packed pad bytes written 0"),
                   ops::absent_by_default(ops::optional_output(
                       "out_bf16", {DType::bf16}, "T, H", Layout::contiguous,
                       "with_out_bf16: the output rounded once to bf16")),
                   ops::optional(ops::output_like("residual_out", "x",
                                                  "T, H", Layout::contiguous,
                                                  "x + residual in x's dtype"),
                                 false),
                   ops::optional(ops::output("rstd", {DType::f32}, "T",
                                             Layout::contiguous, "with_rstd"),
                                 false),
                   ops::absent_by_default(ops::optional_output(
                       "mega_moe_sf", {DType::i32}, "", Layout::as_shaped,
                       "a MoE kernel's activation-SF rows (P, H / 128), P = "
                       "ceil(T / bm) align(bm, 128), strides (1, >= P): the "
                       "packed scales again, token t's in row "
                       "mega_moe_row(t); the other rows left"))},
       .params = with_sf_flags(
           {ops::real("eps", 1e-6, 0.0, "inside the rsqrt"),
            ops::choice("fmt", "e4m3", {"e4m3"}, "the output format"),
            ops::integer("num_per_channels", 32, 1, 1 << 30,
                         "channels a scale: 32"),
            ops::real("out_scale", 1.0, "scales the output"),
            ops::integer("mega_moe_block_m", 0, 0, 1 << 30,
                         "mega_moe_sf's block of rows (0: none)")}),
       .dim_rules = {{.dim = "H", .min = 16, .max = 8192, .multiple = 16}},
       .cli_shape = "T, H",
       .default_shape = {8192, 7168},
       .check = check,
       .shape_of =
           [](std::string_view tensor, const ops::ShapeArgs &a) {
             const int64_t t = a.dim("T"), h = a.dim("H");
             if (tensor == "out")
               return ops::TensorShape{DType::e4m3, {t, h}, {h, 1}};
             if (tensor == "mega_moe_sf") {
               const int64_t bm = a.integer("mega_moe_block_m");
               const int64_t rows = bm > 0 ? mega_moe_rows(t, bm) : 0;
               return ops::TensorShape{DType::i32,
                                       {rows, h / 128},
                                       {1, std::max<int64_t>(1, rows)}};
             }
             return sf_shape(t, (h + 31) / 32, sf_layout_of(a));
           },
       .reference = reference},
      {spec, norm_forward_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(norm_forward_and_per_token_cast_op);

} // namespace tilejit::quant
