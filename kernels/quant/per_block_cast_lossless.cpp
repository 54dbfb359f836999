// per_block_cast_lossless.cpp - per_block_cast_lossless declared: packed
// fp4 with (1, x_bk) power-of-two scales to e4m3 in out_bm x out_bk blocks,
// exactly; 256 threads a max(out_bm, 32) x max(out_bk, 8192 / rows) tile.
#include "quant/per_block_cast_lossless.h"
#include "quant/per_token_cast_back.h"
#include "quant/scale_layout.h"

#include "op/op.h"

#include <bit>

namespace tilejit::quant {

static constexpr std::string_view kOp = "per_block_cast_lossless";

static void check(const ops::Call &c) {
  const int64_t x_bm = c.integer("x_bm"), x_bk = c.integer("x_bk"),
                out_bm = c.integer("out_bm"), out_bk = c.integer("out_bk");
  if (x_bm != 1)
    throw UserError(fmt::format("{}: argument 'x_bm' is {}; requires 1 "
                                "(input scales of (1, x_bk))",
                                kOp, x_bm));
  if (!std::has_single_bit(static_cast<uint64_t>(x_bk)) || x_bk < 8 ||
      x_bk > 128)
    throw UserError(fmt::format("{}: argument 'x_bk' is {}; requires a power "
                                "of two from 8 to 128",
                                kOp, x_bk));
  if (out_bm != 1 && out_bm != 32 && out_bm != 128)
    throw UserError(fmt::format("{}: argument 'out_bm' is {}; requires 1, 32 "
                                "or 128",
                                kOp, out_bm));
  if (!std::has_single_bit(static_cast<uint64_t>(out_bk)) || out_bk < x_bk ||
      out_bk > 128)
    throw UserError(fmt::format("{}: argument 'out_bk' is {}; requires a "
                                "power of two from x_bk = {} to 128",
                                kOp, out_bk, x_bk));
  // round_sf is ignored (the scales are powers of two): packed scales need
  // only the column-major layout.
  if (c.flag("use_packed_ue8m0") && !c.flag("use_tma_aligned_col_major_sf"))
    throw UserError(fmt::format("{}: argument 'use_packed_ue8m0' is true; "
                                "requires use_tma_aligned_col_major_sf",
                                kOp));
}

static PerBlockCastLosslessSpec spec(const ops::Call &c) {
  PerBlockCastLosslessSpec s;
  s.x_bk = static_cast<int32_t>(c.integer("x_bk"));
  s.x_packed = c.tensor("x_sf").dtype == DType::i32;
  s.out_bm = static_cast<int32_t>(c.integer("out_bm"));
  s.out_bk = static_cast<int32_t>(c.integer("out_bk"));
  s.block_m = std::max(s.out_bm, 32);
  s.block_k = std::max(s.out_bk, 8192 / s.block_m);
  // 128-row blocks take 80 registers a thread (three blocks an SM); kept
  // to 64 (four, 44 bytes spilled): 44.2 us against 49.0 at 8001 x 7168 on
  // an H100 (session 67; 512 threads a block: 62.1).
  if (s.block_m == 128)
    s.min_blocks = 4;
  s.sf_layout = sf_layout_of(c);
  s.vector_bytes = ops::vector_bytes(c, {"x_data", "out"});
  return s;
}

/// Input scales as (M, threads, ...) with the second dimension of stride 0
/// (the kernel reads as many copies as it needs), packed ones as bytes (M,
/// threads, W, 4); packed output scales as the (M', W, 4) bytes.
static void views(const ops::Call &c, const PerBlockCastLosslessSpec &s,
                  ops::KernelArgs &args) {
  const rt::TensorView &sf = c.tensor("x_sf");
  args.tensor("x_sf",
              ops::repeated(s.x_packed ? ops::as_bytes(sf) : sf, 1, s.threads));
  if (s.sf_layout == SfLayout::packed_ue8m0)
    args.tensor("out_sf", ops::as_bytes(c.tensor("out_sf")));
}

/// x_data: int8 (M, K / 2); x_sf: (M, ceil(K / x_bk)) f32, or packed int32;
/// out_sf: by the flags.
static ops::TensorShape shape_of(std::string_view tensor,
                                 const ops::ShapeArgs &a) {
  const int64_t m = a.dim("M"), k = a.dim("K");
  if (tensor == "x_data")
    return {DType::i8, {m, k / 2}, {k / 2, 1}};
  if (tensor == "x_sf")
    return sf_shape(m, (k + a.integer("x_bk") - 1) / a.integer("x_bk"),
                    a.dtype("x_sf") == DType::i32 ? SfLayout::packed_ue8m0
                                                  : SfLayout::row_major);
  const int64_t bm = a.integer("out_bm"), bk = a.integer("out_bk");
  return sf_shape((m + bm - 1) / bm, (k + bk - 1) / bk, sf_layout_of(a));
}

const ops::OpDef &per_block_cast_lossless_op() {
  static const ops::OpDef op = ops::make_op<PerBlockCastLosslessSpec>(
      {.name = std::string(kOp),
       .summary = "packed fp4 with power-of-two (1, x_bk) scales to e4m3 in "
                  "out_bm x out_bk blocks, exactly",
       .tensors = {ops::input("x_data", {DType::i8}, "",
                              ops::Layout::contiguous,
                              "int8 (M, K / 2) of e2m1 codes"),
                   ops::input(
                       "x_sf", {DType::f32, DType::i32}, "",
                       ops::Layout::strided,
                       "power-of-two scales: f32 (M, ceil(K / x_bk)) of any "
                       "strides, or packed int32"),
                   ops::output("out", {DType::e4m3}, "M, K"),
                   ops::output("out_sf", {DType::f32, DType::i32},
                               "", ops::Layout::as_shaped,
                               "scales; layout by the flags (§3.3)")},
       .params = with_sf_flags(
           {ops::choice("fmt", "e4m3", {"e4m3"}, "the output format"),
            ops::integer("x_bm", 1, 1, 1 << 30, "rows an input scale: 1"),
            ops::integer("x_bk", 32, 1, 1 << 30,
                         "channels an input scale: a power of two, 8 to 128"),
            ops::integer("out_bm", 128, 1, 1 << 30,
                         "rows an output block: 1, 32 or 128"),
            ops::integer("out_bk", 128, 1, 1 << 30,
                         "channels an output block: a power of two, x_bk to "
                         "128")}),
       .dim_rules = {{.dim = "K", .multiple = 32}},
       .cli_shape = "M, K",
       .default_shape = {8001, 7168},
       .check = check,
       .shape_of = shape_of,
       .dims_from_inputs = quantized_data_dims,
       .reference =
           [](const ops::HostCall &c) {
             QuantTensor q = per_block_cast_lossless_ref(
                 QuantTensor{c.tensor("x_data"), c.tensor("x_sf")},
                 c.choice("fmt"), {1, c.integer("x_bk")},
                 {c.integer("out_bm"), c.integer("out_bk")},
                 c.flag("use_tma_aligned_col_major_sf"), c.flag("round_sf"),
                 c.flag("use_packed_ue8m0"));
             return std::vector{q.data, q.sf};
           }},
      {spec, per_block_cast_lossless_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(per_block_cast_lossless_op);

void per_block_cast_lossless(const rt::TensorView &x_data,
                             const rt::TensorView &x_sf, int64_t x_bk,
                             int64_t out_bm, int64_t out_bk,
                             const rt::TensorView &out,
                             const rt::TensorView &out_sf,
                             bool use_tma_aligned_col_major_sf,
                             bool use_packed_ue8m0, CUstream stream) {
  const rt::TensorView tensors[] = {x_data, x_sf, out, out_sf};
  const ops::ParamValue params[] = {std::string("e4m3"),
                                    int64_t{1},
                                    x_bk,
                                    out_bm,
                                    out_bk,
                                    use_tma_aligned_col_major_sf,
                                    false,
                                    use_packed_ue8m0};
  per_block_cast_lossless_op().call(tensors, params, stream);
}

} // namespace tilejit::quant
