// expand_to_fused.cpp - expand_to_fused and expand_to_fused_with_sf
// declared: tokens x (T, H) copied to fused rows out (N, H) through
// token_topk_to_pos (T, K), padding rows (pos_to_expert < 0) zeroed; with
// the scales' rows alongside. One kernel: block row b takes token b and
// fused row b.
#include "moe/expand_to_fused.h"
#include "moe/reference.h"

#include "op/op.h"

#include <algorithm>

namespace tilejit::moe {

namespace {

/// The dtype x's elements are copied as: an integer of their size (bf16
/// for two bytes), so that every bit pattern moves unchanged.
DType copy_dtype(DType t) {
  switch (size_of(t)) {
  case 1:
    return DType::u8;
  case 2:
    return DType::bf16;
  case 4:
    return DType::i32;
  default:
    return DType::i64;
  }
}

ExpandToFusedSpec spec(const ops::Call &c) {
  ExpandToFusedSpec s;
  const DType x = c.tensor("x").dtype;
  s.dtype = copy_dtype(x);
  s.topk = static_cast<int32_t>(c.dim("K"));
  s.vector_bytes = ops::vector_bytes(c, {"x", "out"});
  // A block takes a whole row where it can (up to 16 16-byte chunks a
  // thread: a token's loads all in flight at once): the widest block that
  // divides H, 64 threads before 128 (TileKernels' benchmark shape, bf16:
  // 7 chunks a thread read 67% of a copy's bandwidth, 14 read 79%); else
  // 64 threads and the chunks that cover H.
  const int64_t h = c.dim("H"), size = static_cast<int64_t>(size_of(x));
  const int64_t vector = 16 / size;
  s.threads = 0;
  s.block_h = 0;
  for (int64_t threads : {64, 128})
    for (int64_t chunks = 16; chunks >= 1; --chunks) {
      const int64_t w = threads * chunks * vector;
      if (h > 0 && h % w == 0 && w > s.block_h) {
        s.threads = static_cast<int32_t>(threads);
        s.block_h = static_cast<int32_t>(w);
      }
    }
  if (s.threads == 0) {
    s.threads = 64;
    const int64_t chunks = std::clamp<int64_t>(
        (h + s.threads * vector - 1) / (s.threads * vector), 1, 16);
    s.block_h = static_cast<int32_t>(s.threads * chunks * vector);
  }
  s.whole = h > 0 && h % s.block_h == 0;
  if (c.op().tensor_index("x_sf") >= 0) {
    // Scale columns a block: the blocks' share of x_sf's, an element a
    // thread at a time.
    const int64_t blocks =
        std::max<int64_t>((h + s.block_h - 1) / s.block_h, 1);
    const int64_t columns = c.tensor("x_sf").shape[1];
    const int64_t per_block = (columns + blocks - 1) / blocks;
    s.sf_block = static_cast<int32_t>(
        std::max<int64_t>((per_block + s.threads - 1) / s.threads, 1) *
        s.threads);
  }
  return s;
}

/// x and out (and the scales) as the copy dtype's; token_topk_to_pos
/// flattened to (T * K,); `rows`, a size only: max(T, N).
void views(const ops::Call &c, const ExpandToFusedSpec &s,
           ops::KernelArgs &args) {
  auto as_copied = [](rt::TensorView t, DType dtype) {
    t.dtype = dtype; // of the same size
    return t;
  };
  args.tensor("x", as_copied(c.tensor("x"), s.dtype));
  args.tensor("out", as_copied(c.tensor("out"), s.dtype));
  args.flat("positions", c.tensor("token_topk_to_pos"));
  const int64_t n = c.dim("N");
  if (s.sf_block > 0) {
    args.tensor("sf", as_copied(c.tensor("x_sf"), DType::i32));
    args.tensor("out_sf", as_copied(c.tensor("out_sf"), DType::i32));
  }
  const rt::TensorView &x = c.tensor("x");
  args.tensor("rows", rt::TensorView::strided(
                          x.data, DType::u8,
                          std::vector<int64_t>{std::max(c.dim("T"), n)},
                          std::vector<int64_t>{1}));
}

const std::vector<DType> kAnyDtype = {DType::bf16, DType::f16,  DType::f32,
                                      DType::e4m3, DType::e5m2, DType::i8,
                                      DType::u8,   DType::i32,  DType::i64};

ops::TensorDecl x_decl() {
  return ops::input("x", kAnyDtype, "T, H", ops::Layout::contiguous,
                    "tokens, any dtype");
}
ops::TensorDecl maps_decl() {
  return ops::input("token_topk_to_pos", {DType::i32}, "T, K",
                    ops::Layout::contiguous,
                    "each slot's fused row, -1: none; a row named at most "
                    "once");
}
ops::TensorDecl experts_decl() {
  return ops::input("pos_to_expert", {DType::i32}, "N", ops::Layout::contiguous,
                    "each fused row's expert, negative: padding (zeroed)");
}

/// x_sf's columns for x's H and the flags: ceil(H / npc) f32, or a
/// quarter of that (rounded up) of packed i32.
int64_t sf_columns(int64_t h, int64_t npc, bool packed) {
  const int64_t groups = (h + npc - 1) / std::max<int64_t>(npc, 1);
  return packed ? (groups + 3) / 4 : groups;
}

void check_with_sf(const ops::Call &c) {
  const std::string_view op = c.op().name;
  const int64_t npc = c.integer("num_per_channels");
  if (npc != 32 && npc != 128)
    throw UserError(fmt::format("{}: argument 'num_per_channels' is {}; "
                                "requires 32 or 128",
                                op, npc));
  if (c.tensor("x_sf").dtype == DType::i32 &&
      !c.flag("use_tma_aligned_col_major_sf"))
    throw UserError(fmt::format("{}: argument 'x_sf' has dtype i32 (packed "
                                "UE8M0); requires "
                                "use_tma_aligned_col_major_sf",
                                op));
}

/// x_sf (T, S) and out_sf (N, S), S from H, num_per_channels and x_sf's
/// dtype; out_sf row-major or column-major.
ops::TensorShape sf_shape(std::string_view tensor, const ops::ShapeArgs &a) {
  const DType dtype = a.dtype("x_sf");
  const int64_t s = sf_columns(a.dim("H"), a.integer("num_per_channels"),
                               dtype == DType::i32);
  if (tensor == "x_sf")
    return {dtype, {a.dim("T"), s}, {s, 1}};
  const int64_t n = a.dim("N");
  if (a.flag("use_tma_aligned_col_major_sf"))
    return {dtype, {n, s}, {1, (n + 3) / 4 * 4}};
  return {dtype, {n, s}, {s, 1}};
}

} // namespace

const ops::OpDef &expand_to_fused_op() {
  static const ops::OpDef op = ops::make_op<ExpandToFusedSpec>(
      {.name = "expand_to_fused",
       .summary = "MoE tokens copied to their fused rows: out[p] = x[t] for "
                  "p = token_topk_to_pos[t, k] >= 0, zero rows where "
                  "pos_to_expert < 0",
       .tensors = {x_decl(), maps_decl(), experts_decl(),
                   ops::output_like("out", "x", "N, H")},
       .dim_rules = {{.dim = "K", .min = 1, .max = 32}},
       .cli_shape = "T, K, N, H",
       .default_shape = {21760, 8, 34048, 7168},
       .reference =
           [](const ops::HostCall &c) {
             return std::vector{expand_to_fused_ref(
                 c.tensor("x"), c.tensor("token_topk_to_pos"),
                 c.tensor("pos_to_expert"))};
           }},
      {spec, expand_to_fused_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(expand_to_fused_op);

const ops::OpDef &expand_to_fused_with_sf_op() {
  static const ops::OpDef op =
      ops::make_op<ExpandToFusedSpec>(
          {.name = "expand_to_fused_with_sf",
           .summary = "expand_to_fused of a quantized x and its scales x_sf "
                      "(f32, or packed UE8M0 i32 into column-major out_sf)",
           .tensors = {x_decl(),
                       ops::input("x_sf", {DType::f32, DType::i32}, "",
                                  ops::Layout::contiguous,
                                  "x's scales: f32 (T, ceil(H / npc)), or i32 "
                                  "(T, ceil(ceil(H / npc) / 4)) of packed "
                                  "UE8M0"),
                       maps_decl(), experts_decl(),
                       ops::output_like("out", "x", "N, H"),
                       ops::output_like("out_sf", "x_sf", "",
                                        ops::Layout::as_shaped,
                                        "(N, S), row-major, or column-major "
                                        "(strides (1, align(N, 4))) with "
                                        "use_tma_aligned_col_major_sf")},
           .params = {ops::integer("num_per_channels", 128, 1, 1 << 30,
                                   "channels a scale: 32 or 128"),
                      ops::flag("use_tma_aligned_col_major_sf", false,
                                "out_sf column-major, rows padded to 4 "
                                "(required for packed scales)")},
           .dim_rules = {{.dim = "K", .min = 1, .max = 32}},
           .cli_shape = "T, K, N, H",
           .default_shape = {21760, 8, 34048, 7168},
           .check = check_with_sf,
           .shape_of = sf_shape,
           .reference =
               [](const ops::HostCall &c) {
                 ExpandToFusedWithSfResult r = expand_to_fused_with_sf_ref(
                     {c.tensor("x"), c.tensor("x_sf")},
                     c.integer("num_per_channels"),
                     c.tensor("token_topk_to_pos"), c.tensor("pos_to_expert"),
                     c.flag("use_tma_aligned_col_major_sf"));
                 return std::vector{r.out, r.out_sf};
               }},
          {spec, expand_to_fused_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(expand_to_fused_with_sf_op);

void expand_to_fused(const rt::TensorView &x,
                     const rt::TensorView &token_topk_to_pos,
                     const rt::TensorView &pos_to_expert,
                     const rt::TensorView &out, CUstream stream) {
  expand_to_fused_op().call({x, token_topk_to_pos, pos_to_expert, out}, {},
                            stream);
}

void expand_to_fused_with_sf(
    const rt::TensorView &x, const rt::TensorView &x_sf,
    int64_t num_per_channels, const rt::TensorView &token_topk_to_pos,
    const rt::TensorView &pos_to_expert, bool use_tma_aligned_col_major_sf,
    const rt::TensorView &out, const rt::TensorView &out_sf, CUstream stream) {
  expand_to_fused_with_sf_op().call(
      {x, x_sf, token_topk_to_pos, pos_to_expert, out, out_sf},
      {num_per_channels, use_tma_aligned_col_major_sf}, stream);
}

} // namespace tilejit::moe
