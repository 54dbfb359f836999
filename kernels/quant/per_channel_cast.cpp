// per_channel_cast.cpp - per_channel_cast, per_channel_cast_fused and
// per_channel_cast_and_transpose declared: bf16/f32 (or e4m3 with 1 x 32/128
// scales: 2.1's per_channel_cast and fused, which also gathers rows) to e4m3
// with a scale per column per bm rows (f32, or 2.1's column-pack UE8M0); one
// kernel of 256 threads, 128 x 128 tiles (128 x 256 with input scales,
// 128 x 64 transposed).
#include "quant/per_channel_cast.h"
#include "quant/reference.h"
#include "quant/scale_layout.h"

#include "common/check.h"

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
  if constexpr (!transpose) { // 2.1's arguments
    if (c.has("x_sf")) {
      s.x_group = static_cast<int32_t>(c.integer("num_per_channels"));
      const DType sf = c.tensor("x_sf").dtype;
      s.x_sf_dtype = sf == DType::i32 ? DType::u8 : sf; // packed: its bytes
      // 64 elements a thread: 128 x 128 tiles of 256 threads, or 32 x 256
      // of 128 (128 x 256 tiles took 191 registers, one block an SM).
      if (s.bm == 32) {
        s.block_k = 256;
        s.threads = 128;
      }
    }
    // 32 rows a scale: 32-row tiles (H100, 8064 x 7168, packed UE8M0 out:
    // a bf16 x 84.8 -> 74.7 us against 128-row tiles; an e4m3 x of packed
    // 1 x 128 scales 91.6 -> 62.4 us against 64-row tiles of 224 registers).
    if (s.bm == 32)
      s.block_m = 32;
    s.col_pack = c.flag("use_packed_ue8m0");
    // A plain bf16 x of 128 rows a scale: through shared memory (80
    // registers and 3 blocks an SM instead of 105 and 2; 94.8% of copy
    // against 87.8% at 8064 x 7168). An f32 tile, or 32 rows a scale (the
    // scales' layout conversions), would need more than 48 KB. A quantized
    // x's stored bytes too (120 -> 96 registers with 32 rows a scale, 122
    // -> 111 with 128).
    s.stage = s.x_group || (s.bm == 128 && s.in_dtype == DType::bf16);
  } else {
    // The bf16 tile transposed first: 64 registers for 4 blocks an SM (H200,
    // 8064 x 7168: 58.0 -> 52.8 us with 128 rows a scale, TileKernels
    // 44.85; 180.5 -> 55.3 us with 32, where the transpose of the e4m3
    // tile had taken 127 registers and 45 KB of shared memory; whole tiles
    // unchecked then 47.1 and 49.2 us). No hint: 50.2 us, 5 blocks: 52.2,
    // 128 x 128 tiles with 2, 3 or no hint: 50.3 to 52.3.
    s.min_blocks = 4;
  }
  s.inside =
      !s.x_group && c.dim("M") % s.block_m == 0 && c.dim("K") % s.block_k == 0;
  return s;
}

/// out_sf (M / bm, K) as its transposed view (K, M / bm), which the
/// transposed kernel stores a channel a row.
void bind_transposed_sf(const ops::Call &c, ops::KernelArgs &args) {
  const rt::TensorView &sf = c.tensor("out_sf");
  args.tensor("out_sf", ops::view_as(sf, {sf.shape[1], sf.shape[0]},
                                     {sf.strides[1], sf.strides[0]}));
}

static void transposed_views(const ops::Call &c, const PerChannelCastSpec &,
                             ops::KernelArgs &args) {
  bind_transposed_sf(c, args);
}

/// A quantized x's scales as (M, threads, K / g), or packed as the bytes
/// (M, threads, W, 4) (dequant_dsl.h); column-pack out_sf as the bytes
/// (Q, 4, K): block b is byte b % 4 of word row b / 4.
static void views(const ops::Call &c, const PerChannelCastSpec &s,
                  ops::KernelArgs &args) {
  if (s.x_group) {
    const rt::TensorView &sf = c.tensor("x_sf");
    const bool packed = s.x_sf_dtype == DType::u8;
    args.tensor("x_sf",
                ops::repeated(packed ? ops::as_bytes(sf) : sf, 1, s.threads));
  }
  if (s.col_pack) {
    const rt::TensorView &sf = c.tensor("out_sf");
    args.tensor("out_sf",
                ops::view_as(ops::as_bytes(sf), {sf.shape[0], 4, sf.shape[1]},
                             {4 * sf.strides[0], 1, 4}));
  }
}

/// x is e4m3 exactly when x_sf is given, and num_per_channels is then 128
/// (or 32, with `group_32`: 2.1's form), 0 (None) otherwise.
static void check_quantized_x(const ops::Call &c, bool group_32) {
  const std::string_view op = c.op().name;
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
  const bool allowed = g == 128 || (g == 32 && group_32);
  if (quantized ? !allowed : g != 0)
    throw UserError(fmt::format("{}: argument 'num_per_channels' is {} {} "
                                "x_sf; requires {}",
                                op, g, quantized ? "with" : "without",
                                !quantized ? "0 (None)"
                                : group_32 ? "32 or 128"
                                           : "128"));
}

/// TileKernels 2.1's arguments a call uses (a quantized x, packed scales,
/// 32 rows a scale), or "" for 1.0's form.
static std::string form_21(const ops::Call &c) {
  if (c.has("x_sf"))
    return "with x_sf";
  if (c.flag("use_packed_ue8m0"))
    return "with use_packed_ue8m0";
  if (c.integer("num_per_tokens") != 128)
    return fmt::format("with num_per_tokens {}", c.integer("num_per_tokens"));
  return "";
}

static void check(const ops::Call &c) {
  const std::string_view op = c.op().name;
  const int64_t bm = c.integer("num_per_tokens");
  if (bm != 128 && bm != 32)
    throw UserError(fmt::format("{}: argument 'num_per_tokens' is {}; "
                                "requires 32 or 128",
                                op, bm));
  if (op != "per_channel_cast")
    return;
  check_quantized_x(c, true);
  if (c.flag("use_packed_ue8m0") && !c.flag("round_sf"))
    throw UserError(fmt::format("{}: argument 'use_packed_ue8m0' is true; "
                                "requires round_sf",
                                op));
  const std::string form = form_21(c);
  if (!form.empty() && c.dim("K") % 128 != 0)
    throw UserError(fmt::format("{}: argument 'x' has K = {} columns; {} "
                                "(TileKernels 2.1's form) requires a "
                                "multiple of 128",
                                op, c.dim("K"), form));
}

/// out_sf: f32 (M / bm, K) row-major, or 2.1's column-pack int32
/// (ceil(M / bm / 4), K); a quantized x's x_sf: (M, K / g) f32 of any
/// strides or packed UE8M0 (scale_layout.h).
static ops::TensorShape shape_of(std::string_view name,
                                 const ops::ShapeArgs &a) {
  const int64_t m = a.dim("M"), k = a.dim("K");
  if (name == "x_sf") {
    const int64_t g = std::max<int64_t>(1, a.integer("num_per_channels"));
    const int64_t groups = (k + g - 1) / g;
    if (a.dtype("x_sf") == DType::e4m3)
      return e4m3_sf_shape(m, groups, SfLayout::row_major);
    return sf_shape(m, groups,
                    a.dtype("x_sf") == DType::i32 ? SfLayout::packed_ue8m0
                                                  : SfLayout::row_major);
  }
  const int64_t blocks = m / a.integer("num_per_tokens");
  if (a.op->find_param("use_packed_ue8m0") && a.flag("use_packed_ue8m0"))
    return {DType::i32, {(blocks + 3) / 4, k}, {k, 1}};
  return {DType::f32, {blocks, k}, {k, 1}};
}

static const std::vector<ops::ParamDecl> kParams = {
    ops::choice("fmt", "e4m3", {"e4m3"}, "the output format"),
    ops::integer("num_per_tokens", 128, 1, 1 << 30,
                 "rows a scale covers: 128, or 32 (2.1)"),
    ops::flag("round_sf", false, "scales rounded up to powers of two")};

/// The declaration of per_channel_cast and per_channel_cast_and_transpose:
/// their names, tensors, parameters and references; the rest is common.
static ops::OpDef
declare(std::string name, std::string summary,
        std::vector<ops::TensorDecl> tensors,
        std::vector<ops::ParamDecl> params,
        std::function<std::vector<ref::HostTensor>(const ops::HostCall &)>
            reference) {
  return {.name = std::move(name),
          .summary = std::move(summary),
          .tensors = std::move(tensors),
          .params = std::move(params),
          .dim_rules = {{.dim = "M", .multiple = 128},
                        {.dim = "K", .multiple = 64}},
          .cli_shape = "M, K",
          .default_shape = {8064, 7168},
          .check = check,
          .shape_of = shape_of,
          .reference = std::move(reference)};
}

const ops::OpDef &per_channel_cast_op() {
  std::vector<ops::ParamDecl> params = kParams;
  params.push_back(ops::integer("num_per_channels", 0, 0, 1 << 30,
                                "2.1: x_sf's channels a scale, 32 or 128; 0 "
                                "(None) without x_sf"));
  params.push_back(ops::flag("use_packed_ue8m0", false,
                             "2.1: out_sf as column-pack UE8M0 int32 "
                             "(ceil(M / num_per_tokens / 4), K)"));
  auto reference = [](const ops::HostCall &c) {
    const int64_t bm = c.integer("num_per_tokens");
    const bool packed = c.flag("use_packed_ue8m0");
    if (!c.has("x_sf") && !packed && bm == 128) { // 1.0's form
      QuantTensor q = per_channel_cast_ref(c.tensor("x"), c.choice("fmt"), bm,
                                           c.flag("round_sf"));
      return std::vector{q.data, q.sf};
    }
    CastInput x = c.tensor("x");
    std::optional<int64_t> g;
    if (c.has("x_sf")) {
      x = QuantTensor{c.tensor("x"), c.tensor("x_sf")};
      g = c.integer("num_per_channels");
    }
    QuantTensor q = per_channel_cast_21_ref(x, c.choice("fmt"), bm,
                                            c.flag("round_sf"), g, packed);
    return std::vector{q.data, q.sf};
  };
  static const ops::OpDef op = ops::make_op<PerChannelCastSpec>(
      declare("per_channel_cast",
              "fp8 e4m3 quantization of (M, K) bf16/f32 (or of e4m3 with 1 x "
              "32/128 scales, 2.1) with a scale per column per 128 or 32 rows",
              {ops::input("x", {DType::bf16, DType::f32, DType::e4m3}, "M, K",
                          ops::Layout::contiguous),
               ops::absent_by_default(ops::optional_input(
                   "x_sf", {DType::f32, DType::e4m3, DType::i32}, "",
                   ops::Layout::strided,
                   "2.1: x e4m3's scales of 1 x num_per_channels: f32 or e4m3 "
                   "(M, K / num_per_channels) of any strides, or packed UE8M0 "
                   "int32")),
               ops::output("out", {DType::e4m3}, "M, K"),
               ops::output("out_sf", {DType::f32, DType::i32}, "",
                           ops::Layout::contiguous,
                           "f32 (M / num_per_tokens, K), or column-pack int32 "
                           "with use_packed_ue8m0")},
              std::move(params), reference),
      {spec<false>, per_channel_cast_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(per_channel_cast_op);

const ops::OpDef &per_channel_cast_and_transpose_op() {
  static const ops::OpDef op = ops::make_op<PerChannelCastSpec>(
      declare("per_channel_cast_and_transpose",
              "per_channel_cast of bf16 (32 or 128 rows a scale), written "
              "transposed (K, M)",
              {ops::input("x", {DType::bf16}, "M, K", ops::Layout::contiguous),
               ops::output("out", {DType::e4m3}, "K, M"),
               ops::output("out_sf", {DType::f32}, "", ops::Layout::contiguous,
                           "f32 (M / num_per_tokens, K)")},
              kParams,
              [](const ops::HostCall &c) {
                QuantTensor q = per_channel_cast_and_transpose_ref(
                    c.tensor("x"), c.choice("fmt"), c.integer("num_per_tokens"),
                    c.flag("round_sf"));
                return std::vector{q.data, q.sf};
              }),
      {spec<true>, per_channel_cast_kernel, transposed_views});
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
  s.vector_bytes = ops::vector_bytes(c, {"x"});
  // x through shared memory as loaded, read back after the absmax, as
  // per_channel_cast (H200, a bf16 x of 4096 rows of 7168 without
  // pos_to_token: 27.6 -> 25.9 us; TileKernels 23.24); 128 x 128 tiles,
  // also with x_sf (its scales read twice a tile): 128 x 256 ones took 192
  // registers, one block an SM (H100, 28672 rows: 48.9% of copy).
  s.stage = s.in_dtype != DType::f32;
  if (s.x_sf) // 103 -> 80 registers, no spills: 3 blocks an SM
    s.min_blocks = 3;
  s.inside =
      !s.gather && c.dim("R") % s.block_m == 0 && c.dim("K") % s.block_k == 0;
  return s;
}

static void check_fused(const ops::Call &c) {
  const std::string_view op = c.op().name;
  const int64_t bm = c.integer("num_per_tokens");
  if (bm != 128)
    throw UserError(fmt::format("{}: argument 'num_per_tokens' is {}; "
                                "requires 128",
                                op, bm));
  check_quantized_x(c, false);
  const bool quantized = c.has("x_sf");
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

/// x_sf as (N, threads, K / 128), the second dimension of stride 0 (the
/// kernel reads as many copies as it needs).
static void fused_views(const ops::Call &c, const PerChannelCastSpec &s,
                        ops::KernelArgs &args) {
  if (s.x_sf)
    args.tensor("x_sf", ops::repeated(c.tensor("x_sf"), 1, s.threads));
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
       // Without pos_to_token every row is its own: R = N.
       .dims_from_inputs =
           [](const ops::Call &c) {
             return c.has("pos_to_token")
                        ? std::vector<std::pair<std::string, int64_t>>{}
                        : std::vector<std::pair<std::string, int64_t>>{
                              {"R", c.dim("N")}};
           },
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
      {fused_spec, per_channel_cast_kernel, fused_views});
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
  per_channel_cast(x, ops::absent(), 0, fmt_name, num_per_tokens, out, out_sf,
                   round_sf, false, stream);
}

void per_channel_cast(const rt::TensorView &x, const rt::TensorView &x_sf,
                      int64_t num_per_channels, std::string_view fmt_name,
                      int64_t num_per_tokens, const rt::TensorView &out,
                      const rt::TensorView &out_sf, bool round_sf,
                      bool use_packed_ue8m0, CUstream stream) {
  per_channel_cast_op().call({x, x_sf, out, out_sf},
                             {std::string(fmt_name), num_per_tokens, round_sf,
                              num_per_channels, use_packed_ue8m0},
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
