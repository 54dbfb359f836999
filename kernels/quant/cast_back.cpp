// cast_back.cpp - cast_back declared: e4m3 or packed e2m1 (M, K) with
// bm x bk block scales (f32 of any layout, or packed UE8M0) to bf16 or f32,
// on per_token_cast_back's kernel (its scales seen through a stride-0 view).
#include "quant/cast_back.h"
#include "quant/per_token_cast_back.h"
#include "quant/reference.h"
#include "quant/scale_layout.h"

#include "op/op.h"

namespace tilejit::quant {

static void check(const ops::Call &c) {
  const int64_t bm = c.integer("bm"), bk = c.integer("bk"), k = c.dim("K");
  if (bm != 1 && bm != 32 && bm != 128)
    throw UserError(fmt::format("cast_back: argument 'bm' is {}; requires 1, "
                                "32 or 128",
                                bm));
  if (bk != 1 && bk != 16 && bk != 32 && bk != 64 && bk != 128 && bk != k)
    throw UserError(fmt::format("cast_back: argument 'bk' is {}; requires 1, "
                                "16, 32, 64, 128, or K = {}",
                                bk, k));
}

static CastBackSpec spec(const ops::Call &c) {
  CastBackSpec s;
  s.out_dtype = c.tensor("out").dtype;
  s.e2m1 = c.tensor("x_data").dtype == DType::i8;
  s.bm = static_cast<int32_t>(c.integer("bm"));
  const int64_t bk = c.integer("bk");
  s.group = bk == c.dim("K") && bk > 128 ? 0 : static_cast<int32_t>(bk);
  s.packed = c.tensor("x_sf").dtype == DType::i32;
  s.vector_bytes = ops::rows_aligned(c.tensor("x_data"), 16) &&
                           ops::rows_aligned(c.tensor("out"), 16)
                       ? 16
                       : 0;
  return s;
}

static void views(const ops::Call &c, const CastBackSpec &s,
                  ops::KernelArgs &args) {
  args.tensor("x_sf", cast_back_scales(c.tensor("x_sf"), s.bm));
}

const ops::OpDef &cast_back_op() {
  static const ops::OpDef op = ops::make_op<CastBackSpec>(
      {.name = "cast_back",
       .summary = "bf16/f32 (M, K) from e4m3 or packed e2m1 data and bm x bk "
                  "block scales (f32, or packed UE8M0)",
       .tensors = {ops::input("x_data", {DType::e4m3, DType::i8}, "",
                              ops::Layout::contiguous,
                              "e4m3 (M, K), or int8 (M, K / 2) of e2m1 codes"),
                   ops::input("x_sf", {DType::f32, DType::i32}, "",
                              ops::Layout::strided,
                              "f32 (M', nK) or packed int32"),
                   ops::output("out", {DType::bf16, DType::f32}, "M, K")},
       .params = {ops::integer("bm", 1, 1, 1 << 30,
                               "rows a scale covers: 1, 32 or 128"),
                  ops::integer("bk", 128, 1, 1 << 30,
                               "channels a scale covers: 1, 16, 32, 64, 128 "
                               "or K")},
       .dim_rules = {{.dim = "K", .multiple = 64}},
       .cli_shape = "M, K",
       .default_shape = {8001, 7168},
       .check = check,
       .shape_of =
           [](std::string_view tensor, const ops::ShapeArgs &a) {
             const int64_t m = a.dim("M"), k = a.dim("K");
             if (tensor == "x_data")
               return data_shape(a.dtype("x_data"), m, k);
             const int64_t bm = a.integer("bm"), bk = a.integer("bk");
             return sf_shape((m + bm - 1) / bm, (k + bk - 1) / bk,
                             a.dtype("x_sf") == DType::i32
                                 ? SfLayout::packed_ue8m0
                                 : SfLayout::row_major);
           },
       .reference =
           [](const ops::HostCall &c) {
             return std::vector{cast_back_ref(
                 QuantTensor{c.tensor("x_data"), c.tensor("x_sf")},
                 c.output("out").dtype == DType::f32 ? "fp32" : "bf16",
                 {c.integer("bm"), c.integer("bk")})};
           }},
      {spec, per_token_cast_back_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(cast_back_op);

void cast_back(const rt::TensorView &x_data, const rt::TensorView &x_sf,
               int64_t bm, int64_t bk, const rt::TensorView &out,
               CUstream stream) {
  cast_back_op().call({x_data, x_sf, out}, {bm, bk}, stream);
}

} // namespace tilejit::quant
