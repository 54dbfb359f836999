// cast_back.cpp - cast_back declared: e4m3 or packed e2m1 (M, K) with
// bm x bk block scales (f32 of any layout, or packed UE8M0) to bf16 or f32,
// on per_token_cast_back's kernel (its scales seen through a stride-0 view).
#include "quant/cast_back.h"
#include "quant/per_token_cast_back.h"
#include "quant/reference.h"

#include "op/op.h"

namespace tilejit::quant {

static void check(const ops::Call &c) {
  check_x_special_fmt(c);
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

const ops::OpDef &cast_back_op() {
  static const ops::OpDef op = ops::make_op<CastBackSpec>(
      {.name = "cast_back",
       .summary = "bf16/f32 (M, K) from e4m3 or packed e2m1 data and bm x bk "
                  "block scales (f32, or packed UE8M0)",
       .tensors = cast_back_tensors(),
       .params = {ops::integer("bm", 1, 1, 1 << 30,
                               "rows a scale covers: 1, 32 or 128"),
                  ops::integer("bk", 128, 1, 1 << 30,
                               "channels a scale covers: 1, 16, 32, 64, 128 "
                               "or K"),
                  x_special_fmt_param()},
       .dim_rules = {{.dim = "K", .multiple = 64}},
       .cli_shape = "M, K",
       .default_shape = {8001, 7168},
       .check = check,
       .shape_of =
           [](std::string_view tensor, const ops::ShapeArgs &a) {
             return cast_back_shape(tensor, a, a.integer("bm"),
                                    a.integer("bk"));
           },
       .dims_from_inputs = quantized_data_dims,
       .reference =
           [](const ops::HostCall &c) {
             return std::vector{cast_back_ref(
                 QuantTensor{c.tensor("x_data"), c.tensor("x_sf")},
                 c.output("out").dtype == DType::f32 ? "fp32" : "bf16",
                 {c.integer("bm"), c.integer("bk")}, x_special_fmt_of(c))};
           }},
      {[](const ops::Call &c) {
         return cast_back_spec(c, c.integer("bm"), c.integer("bk"));
       },
       per_token_cast_back_kernel, cast_back_views});
  return op;
}
TILEJIT_REGISTER_OP(cast_back_op);

void cast_back(const rt::TensorView &x_data, const rt::TensorView &x_sf,
               int64_t bm, int64_t bk, const rt::TensorView &out,
               CUstream stream) {
  cast_back_op().call(
      {x_data, x_sf, out},
      {bm, bk, std::string(x_data.dtype == DType::u8 ? "e5m6" : "none")},
      stream);
}

} // namespace tilejit::quant
