// per_block_cast.cpp - per_block_cast, per_block_cast_with_sf_only and
// per_block_cast_with_precomputed_sf declared: bf16/f32 (M, K) to e4m3 or
// packed e2m1 in bm x bk blocks, with f32 or packed UE8M0 scales; 256
// threads a bm x max(bk, 8192 / bm) tile; one kernel.
#include "quant/per_block_cast.h"
#include "quant/scale_layout.h"

#include "op/op.h"

#include <array>

namespace tilejit::quant {

using Mode = PerBlockCastSpec::Mode;

static void check(const ops::Call &c) {
  const std::string &op = c.op().name;
  for (const char *name : {"bm", "bk"})
    if (const int64_t v = c.integer(name); v != 32 && v != 128)
      throw UserError(fmt::format("{}: argument '{}' is {}; requires 32 or 128",
                                  op, name, v));
  const bool col_major = c.flag("use_tma_aligned_col_major_sf"),
             packed = c.flag("use_packed_ue8m0");
  if (c.op().find_tensor("sf") && (col_major || packed))
    throw UserError(fmt::format(
        "{}: argument '{}' is true; requires false "
        "(a precomputed sf is a row-major f32)",
        op, col_major ? "use_tma_aligned_col_major_sf" : "use_packed_ue8m0"));
  check_sf_flags(c);
}

template <Mode mode> static PerBlockCastSpec spec(const ops::Call &c) {
  PerBlockCastSpec s;
  s.mode = mode;
  s.in_dtype = c.tensor("x").dtype;
  s.e2m1 = c.choice("fmt") == "e2m1";
  s.bm = static_cast<int32_t>(c.integer("bm"));
  s.bk = static_cast<int32_t>(c.integer("bk"));
  s.block_k = std::max(s.bk, 8192 / s.bm);
  s.round_sf = c.flag("round_sf");
  s.sf_layout = sf_layout_of(c);
  // to_e2m1's least form (an H100, session 68, one process: 8001 x 7168 in
  // 32 x 32 blocks 60.0 -> 52.6 us)
  if constexpr (mode == Mode::both)
    s.e2m1_least = s.e2m1;
  s.vector_bytes =
      ops::rows_aligned(c.tensor("x"), 16) &&
              (mode == Mode::sf_only || ops::rows_aligned(c.tensor("out"), 16))
          ? 16
          : 0;
  return s;
}

/// Packed scales as the (M', W, 4) bytes of the int32 (M', W).
static void views(const ops::Call &c, const PerBlockCastSpec &s,
                  ops::KernelArgs &args) {
  if (s.sf_layout == SfLayout::packed_ue8m0)
    args.tensor("out_sf", ops::as_bytes(c.tensor("out_sf")));
}

/// A precomputed sf, each scale repeated (repeated_scales).
static void repeated_sf(const ops::Call &c, const PerBlockCastSpec &s,
                        ops::KernelArgs &args) {
  args.tensor("sf", repeated_scales(c.tensor("sf"), s.threads));
}

/// out: e4m3 (M, K) or int8 (M, K / 2); out_sf: by the flags; a
/// precomputed sf: row-major f32.
static ops::TensorShape shape_of(std::string_view tensor,
                                 const ops::ShapeArgs &a) {
  const int64_t m = a.dim("M"), k = a.dim("K");
  if (tensor == "out")
    return a.choice("fmt") == "e2m1"
               ? ops::TensorShape{DType::i8, {m, k / 2}, {k / 2, 1}}
               : ops::TensorShape{DType::e4m3, {m, k}, {k, 1}};
  const int64_t bm = a.integer("bm"), bk = a.integer("bk");
  return sf_shape((m + bm - 1) / bm, (k + bk - 1) / bk,
                  tensor == "sf" ? SfLayout::row_major : sf_layout_of(a));
}

/// The three ops: their name, summary, tensors and reference; the rest is
/// common.
static ops::OpDef
declare(std::string name, std::string summary,
        std::vector<ops::TensorDecl> tensors,
        std::function<std::vector<ref::HostTensor>(const ops::HostCall &,
                                                   BlockSize)>
            reference) {
  return {
      .name = std::move(name),
      .summary = std::move(summary),
      .tensors = std::move(tensors),
      .params = with_sf_flags(
          {ops::choice("fmt", "e4m3", {"e4m3", "e2m1"}, "the output format"),
           ops::integer("bm", 128, 1, 1 << 30,
                        "rows of a scaling block: 32 or 128"),
           ops::integer("bk", 128, 1, 1 << 30,
                        "columns of a scaling block: 32 or 128")}),
      .dim_rules = {{.dim = "K", .multiple = 64}},
      .cli_shape = "M, K",
      .default_shape = {8001, 7168},
      .check = check,
      .shape_of = shape_of,
      .reference = [reference](const ops::HostCall &c) {
        return reference(c, {c.integer("bm"), c.integer("bk")});
      }};
}

static const ops::TensorDecl kX =
    ops::input("x", {DType::bf16, DType::f32}, "M, K", ops::Layout::contiguous);
static const ops::TensorDecl kOut =
    ops::output("out", {DType::e4m3, DType::i8}, "", ops::Layout::contiguous,
                "e4m3 (M, K), or int8 (M, K / 2) for e2m1");
static const ops::TensorDecl kOutSf =
    ops::output("out_sf", {DType::f32, DType::i32}, "", ops::Layout::as_shaped,
                "scales; layout by the flags (§3.3)");

const ops::OpDef &per_block_cast_op() {
  static const ops::OpDef op = ops::make_op<PerBlockCastSpec>(
      declare("per_block_cast",
              "fp8 e4m3 or packed fp4 e2m1 quantization of (M, K) bf16/f32 "
              "in bm x bk blocks, with scales",
              {kX, kOut, kOutSf},
              [](const ops::HostCall &c, BlockSize b) {
                QuantTensor q = per_block_cast_ref(
                    c.tensor("x"), c.choice("fmt"), b,
                    c.flag("use_tma_aligned_col_major_sf"), c.flag("round_sf"),
                    c.flag("use_packed_ue8m0"));
                return std::vector{q.data, q.sf};
              }),
      {spec<Mode::both>, per_block_cast_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(per_block_cast_op);

const ops::OpDef &per_block_cast_with_sf_only_op() {
  static const ops::OpDef op = ops::make_op<PerBlockCastSpec>(
      declare("per_block_cast_with_sf_only", "per_block_cast's scales only",
              {kX, kOutSf},
              [](const ops::HostCall &c, BlockSize b) {
                return std::vector{per_block_cast_with_sf_only_ref(
                    c.tensor("x"), c.choice("fmt"), b,
                    c.flag("use_tma_aligned_col_major_sf"), c.flag("round_sf"),
                    c.flag("use_packed_ue8m0"))};
              }),
      {spec<Mode::sf_only>, per_block_cast_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(per_block_cast_with_sf_only_op);

const ops::OpDef &per_block_cast_with_precomputed_sf_op() {
  static const ops::OpDef op = ops::make_op<PerBlockCastSpec>(
      declare("per_block_cast_with_precomputed_sf",
              "per_block_cast's data with given row-major f32 scales "
              "(sf_inv = 1 / sf)",
              {kX,
               ops::input("sf", {DType::f32}, "", ops::Layout::contiguous,
                          "row-major f32 (ceil(M / bm), ceil(K / bk))"),
               kOut},
              [](const ops::HostCall &c, BlockSize b) {
                return std::vector{per_block_cast_with_precomputed_sf_ref(
                    c.tensor("x"), c.choice("fmt"), b, c.tensor("sf"),
                    c.flag("use_tma_aligned_col_major_sf"), c.flag("round_sf"),
                    c.flag("use_packed_ue8m0"))};
              }),
      {spec<Mode::precomputed_sf>, per_block_cast_kernel, repeated_sf});
  return op;
}
TILEJIT_REGISTER_OP(per_block_cast_with_precomputed_sf_op);

/// The three entries' parameters, in declaration order.
static std::array<ops::ParamValue, 6> params(std::string_view fmt_name,
                                             int64_t bm, int64_t bk,
                                             bool col_major, bool round_sf,
                                             bool packed) {
  return {std::string(fmt_name), bm, bk, col_major, round_sf, packed};
}

void per_block_cast(const rt::TensorView &x, std::string_view fmt_name,
                    int64_t bm, int64_t bk, const rt::TensorView &out,
                    const rt::TensorView &out_sf,
                    bool use_tma_aligned_col_major_sf, bool round_sf,
                    bool use_packed_ue8m0, CUstream stream) {
  const rt::TensorView tensors[] = {x, out, out_sf};
  per_block_cast_op().call(tensors,
                           params(fmt_name, bm, bk,
                                  use_tma_aligned_col_major_sf, round_sf,
                                  use_packed_ue8m0),
                           stream);
}

void per_block_cast_with_sf_only(const rt::TensorView &x,
                                 std::string_view fmt_name, int64_t bm,
                                 int64_t bk, const rt::TensorView &out_sf,
                                 bool use_tma_aligned_col_major_sf,
                                 bool round_sf, bool use_packed_ue8m0,
                                 CUstream stream) {
  const rt::TensorView tensors[] = {x, out_sf};
  per_block_cast_with_sf_only_op().call(tensors,
                                        params(fmt_name, bm, bk,
                                               use_tma_aligned_col_major_sf,
                                               round_sf, use_packed_ue8m0),
                                        stream);
}

void per_block_cast_with_precomputed_sf(const rt::TensorView &x,
                                        std::string_view fmt_name, int64_t bm,
                                        int64_t bk, const rt::TensorView &sf,
                                        const rt::TensorView &out,
                                        bool use_tma_aligned_col_major_sf,
                                        bool round_sf, bool use_packed_ue8m0,
                                        CUstream stream) {
  const rt::TensorView tensors[] = {x, sf, out};
  per_block_cast_with_precomputed_sf_op().call(
      tensors,
      params(fmt_name, bm, bk, use_tma_aligned_col_major_sf, round_sf,
             use_packed_ue8m0),
      stream);
}

} // namespace tilejit::quant
