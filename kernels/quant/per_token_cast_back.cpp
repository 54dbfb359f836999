// per_token_cast_back.cpp - per_token_cast_back declared: e4m3 (M, K) or
// packed e2m1 data and its per-token scales (f32 of any layout, or packed
// UE8M0) to bf16 or f32; 128 x 32 tiles.
#include "quant/per_token_cast_back.h"
#include "quant/reference.h"
#include "quant/scale_layout.h"

#include "op/op.h"

namespace tilejit::quant {

static constexpr std::string_view kOp = "per_token_cast_back";

static void check(const ops::Call &c) {
  check_x_special_fmt(c);
  const int64_t g = c.integer("num_per_channels"), k = c.dim("K");
  if (g != 16 && g != 32 && g != 64 && g != 128 && g != k)
    throw UserError(fmt::format("{}: argument 'num_per_channels' is {}; "
                                "requires 16, 32, 64, 128, or K = {}",
                                kOp, g, k));
}

ops::ParamDecl x_special_fmt_param() {
  return ops::choice("x_special_fmt", "none", {"none", "e5m6"},
                     "e5m6: x_data is E5M6 codes, u8 (M, 3K / 2)");
}

void check_x_special_fmt(const ops::Call &c) {
  const bool e5m6 = c.choice("x_special_fmt") == "e5m6";
  const DType data = c.tensor("x_data").dtype;
  if (e5m6 != (data == DType::u8))
    throw UserError(fmt::format(
        "{}: argument 'x_data' has dtype {}; x_special_fmt {} requires {}",
        c.op().name, name_of(data), c.choice("x_special_fmt"),
        e5m6 ? "u8" : "e4m3 or i8 (u8 with x_special_fmt e5m6)"));
  if (e5m6 && c.tensor("x_data").data % 4 != 0)
    throw UserError(fmt::format("{}: argument 'x_data' starts at {:#x}; "
                                "x_special_fmt e5m6 requires a 4-byte aligned "
                                "address (it is read as 32-bit words)",
                                c.op().name, c.tensor("x_data").data));
}

std::optional<std::string_view> x_special_fmt_of(const ops::HostCall &c) {
  if (c.choice("x_special_fmt") == "e5m6")
    return std::string_view("e5m6");
  return std::nullopt;
}

CastBackSpec cast_back_spec(const ops::Call &c, int64_t bm, int64_t bk) {
  CastBackSpec s;
  s.out_dtype = c.tensor("out").dtype;
  s.e2m1 = c.tensor("x_data").dtype == DType::i8;
  s.e5m6 = c.tensor("x_data").dtype == DType::u8;
  s.bm = static_cast<int32_t>(bm);
  // Groups of 1 .. 128 channels, or one a row (bk = K, which may be any
  // multiple of 64: it takes the same kernel as every other K).
  s.group = bk == c.dim("K") && bk > 128 ? 0 : static_cast<int32_t>(bk);
  s.packed = c.tensor("x_sf").dtype == DType::i32;
  s.vector_bytes = ops::vector_bytes(c, {"x_data", "out"});
  // 64 columns where that still leaves 4096 tiles or more (H200, 8001 x
  // 7168 to bf16: e4m3 48.9 -> 47.2 us, E5M6 54.8 -> 52.5, e2m1 80.1 ->
  // 55.8); fewer, larger tiles were slower (8001 x 2048: 15.6 -> 16.4).
  const int64_t tiles =
      (c.dim("M") + s.block_m - 1) / s.block_m * ((c.dim("K") + 63) / 64);
  if (tiles >= 4096)
    s.block_k = 64;
  return s;
}

std::vector<ops::TensorDecl> cast_back_tensors() {
  return {ops::input("x_data", {DType::e4m3, DType::i8, DType::u8}, "",
                     ops::Layout::contiguous,
                     "e4m3 (M, K), int8 (M, K / 2) of e2m1 codes, or uint8 "
                     "(M, 3K / 2) of E5M6 words"),
          ops::input("x_sf", {DType::f32, DType::i32}, "", ops::Layout::strided,
                     "f32 (M', nK) of any strides, or packed int32"),
          ops::output("out", {DType::bf16, DType::f32}, "M, K")};
}

std::vector<std::pair<std::string, int64_t>>
quantized_data_dims(const ops::Call &c) {
  const rt::TensorView &x = c.tensor("x_data");
  if (x.rank != 2)
    return {};
  const int64_t w = x.shape[1];
  const int64_t k = x.dtype == DType::u8   ? w * 2 / 3
                    : x.dtype == DType::i8 ? w * 2
                                           : w;
  return {{"M", x.shape[0]}, {"K", k}};
}

ops::TensorShape cast_back_shape(std::string_view tensor,
                                 const ops::ShapeArgs &a, int64_t bm,
                                 int64_t bk) {
  const int64_t m = a.dim("M"), k = a.dim("K");
  if (tensor == "x_data" && a.dtype("x_data") == DType::u8)
    return ops::TensorShape{DType::u8, {m, k * 3 / 2}, {k * 3 / 2, 1}};
  if (tensor == "x_data")
    return a.dtype("x_data") == DType::i8
               ? ops::TensorShape{DType::i8, {m, k / 2}, {k / 2, 1}}
               : ops::TensorShape{DType::e4m3, {m, k}, {k, 1}};
  return sf_shape((m + bm - 1) / bm, (k + bk - 1) / bk,
                  a.dtype("x_sf") == DType::i32 ? SfLayout::packed_ue8m0
                                                : SfLayout::row_major);
}

/// The scales as the kernel takes them: f32 (M', nK) as (M', bm, nK), packed
/// int32 (M', W) as bytes (M', bm, W, 4), the bm dimension of stride 0.
void cast_back_views(const ops::Call &c, const CastBackSpec &s,
                     ops::KernelArgs &args) {
  if (s.e5m6) // the u8 (M, 3K / 2) as its u32 words (M, 3K / 8)
    args.tensor("x_words", ops::as_words(c.tensor("x_data")));
  const rt::TensorView &sf = c.tensor("x_sf");
  args.tensor(
      "x_sf",
      ops::repeated(sf.dtype == DType::i32 ? ops::as_bytes(sf) : sf, 1, s.bm));
}

const ops::OpDef &per_token_cast_back_op() {
  static const ops::OpDef op = ops::make_op<CastBackSpec>(
      {.name = "per_token_cast_back",
       .summary =
           "bf16/f32 (M, K) from e4m3 or packed e2m1 data and per-token scales "
           "(f32, or packed UE8M0), groups of num_per_channels",
       .tensors = cast_back_tensors(),
       .params = {ops::integer("num_per_channels", 128, 1, 1 << 30,
                               "channels a scale: 16, 32, 64, 128 or K"),
                  x_special_fmt_param()},
       .dim_rules = {{.dim = "K", .multiple = 64}},
       .cli_shape = "M, K",
       .default_shape = {8001, 7168},
       .check = check,
       .shape_of =
           [](std::string_view tensor, const ops::ShapeArgs &a) {
             return cast_back_shape(tensor, a, 1,
                                    a.integer("num_per_channels"));
           },
       .dims_from_inputs = quantized_data_dims,
       .reference =
           [](const ops::HostCall &c) {
             return std::vector{per_token_cast_back_ref(
                 QuantTensor{c.tensor("x_data"), c.tensor("x_sf")},
                 c.output("out").dtype == DType::f32 ? "fp32" : "bf16",
                 c.integer("num_per_channels"), x_special_fmt_of(c))};
           }},
      {[](const ops::Call &c) {
         return cast_back_spec(c, 1, c.integer("num_per_channels"));
       },
       per_token_cast_back_kernel, cast_back_views});
  return op;
}
TILEJIT_REGISTER_OP(per_token_cast_back_op);

void per_token_cast_back(const rt::TensorView &x_data,
                         const rt::TensorView &x_sf, int64_t num_per_channels,
                         const rt::TensorView &out, CUstream stream) {
  per_token_cast_back_op().call(
      {x_data, x_sf, out},
      {num_per_channels,
       std::string(x_data.dtype == DType::u8 ? "e5m6" : "none")},
      stream);
}

} // namespace tilejit::quant
