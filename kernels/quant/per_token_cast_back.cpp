// per_token_cast_back.cpp - per_token_cast_back declared: e4m3 (M, K) or
// packed e2m1 data and its per-token scales (f32 of any layout, or packed
// UE8M0) to bf16 or f32; 128 x 32 tiles.
#include "quant/per_token_cast_back.h"
#include "quant/reference.h"
#include "quant/scale_layout.h"

#include "op/op.h"

#include <array>

namespace tilejit::quant {

static constexpr std::string_view kOp = "per_token_cast_back";

ops::TensorShape data_shape(DType dtype, int64_t m, int64_t k) {
  return dtype == DType::i8
             ? ops::TensorShape{DType::i8, {m, k / 2}, {k / 2, 1}}
             : ops::TensorShape{DType::e4m3, {m, k}, {k, 1}};
}

static void check(const ops::Call &c) {
  const int64_t g = c.integer("num_per_channels"), k = c.dim("K");
  if (g != 16 && g != 32 && g != 64 && g != 128 && g != k)
    throw UserError(fmt::format("{}: argument 'num_per_channels' is {}; "
                                "requires 16, 32, 64, 128, or K = {}",
                                kOp, g, k));
}

static CastBackSpec spec(const ops::Call &c) {
  CastBackSpec s;
  s.out_dtype = c.tensor("out").dtype;
  s.e2m1 = c.tensor("x_data").dtype == DType::i8;
  // Groups of 16, 32, 64 or 128 channels, or one a row (g = K, which may be
  // any multiple of 64: it takes the same kernel as every other K).
  const int64_t g = c.integer("num_per_channels");
  s.group = g == c.dim("K") && g > 128 ? 0 : static_cast<int32_t>(g);
  s.packed = c.tensor("x_sf").dtype == DType::i32;
  s.vector_bytes = ops::rows_aligned(c.tensor("x_data"), 16) &&
                           ops::rows_aligned(c.tensor("out"), 16)
                       ? 16
                       : 0;
  return s;
}

rt::TensorView cast_back_scales(const rt::TensorView &sf, int64_t bm) {
  const rt::TensorView t = sf.dtype == DType::i32 ? ops::as_bytes(sf) : sf;
  std::array<int64_t, rt::TensorView::kMaxRank> shape{}, strides{};
  shape[0] = t.shape[0];
  strides[0] = t.strides[0];
  shape[1] = bm;
  strides[1] = 0;
  for (int i = 1; i < t.rank; ++i) {
    shape[i + 1] = t.shape[i];
    strides[i + 1] = t.strides[i];
  }
  return rt::TensorView::strided(t.data, t.dtype,
                                 std::span(shape.data(), t.rank + 1),
                                 std::span(strides.data(), t.rank + 1));
}

static void views(const ops::Call &c, const CastBackSpec &,
                  ops::KernelArgs &args) {
  args.tensor("x_sf", cast_back_scales(c.tensor("x_sf"), 1));
}

const ops::OpDef &per_token_cast_back_op() {
  static const ops::OpDef op = ops::make_op<CastBackSpec>(
      {.name = "per_token_cast_back",
       .summary = "bf16/f32 (M, K) from e4m3 data and per-token scales "
                  "(f32, or packed UE8M0), groups of num_per_channels",
       .tensors = {ops::input("x_data", {DType::e4m3, DType::i8}, "",
                              ops::Layout::contiguous,
                              "e4m3 (M, K), or int8 (M, K / 2) of e2m1 codes"),
                   ops::input("x_sf", {DType::f32, DType::i32}, "",
                              ops::Layout::strided,
                              "f32 (M, groups) or packed int32"),
                   ops::output("out", {DType::bf16, DType::f32}, "M, K")},
       .params = {ops::integer("num_per_channels", 128, 1, 1 << 30,
                               "channels a scale: 16, 32, 64, 128 or K")},
       .dim_rules = {{.dim = "K", .multiple = 64}},
       .cli_shape = "M, K",
       .default_shape = {8001, 7168},
       .check = check,
       .shape_of =
           [](std::string_view tensor, const ops::ShapeArgs &a) {
             const int64_t m = a.dim("M"), k = a.dim("K");
             if (tensor == "x_data")
               return data_shape(a.dtype("x_data"), m, k);
             // f32 (M, groups) of any strides, or packed int32.
             const int64_t g = a.integer("num_per_channels");
             return sf_shape(m, (k + g - 1) / g,
                             a.dtype("x_sf") == DType::i32
                                 ? SfLayout::packed_ue8m0
                                 : SfLayout::row_major);
           },
       .reference =
           [](const ops::HostCall &c) {
             return std::vector{per_token_cast_back_ref(
                 QuantTensor{c.tensor("x_data"), c.tensor("x_sf")},
                 c.output("out").dtype == DType::f32 ? "fp32" : "bf16",
                 c.integer("num_per_channels"))};
           }},
      {spec, per_token_cast_back_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(per_token_cast_back_op);

void per_token_cast_back(const rt::TensorView &x_data,
                         const rt::TensorView &x_sf, int64_t num_per_channels,
                         const rt::TensorView &out, CUstream stream) {
  per_token_cast_back_op().call({x_data, x_sf, out}, {num_per_channels},
                                stream);
}

} // namespace tilejit::quant
