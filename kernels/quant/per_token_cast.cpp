// per_token_cast.cpp - per_token_cast declared: bf16/f32 (M, K) to e4m3 in
// groups of num_per_channels, with f32 or packed UE8M0 scales; the tiling
// (per_token_cast_tiling) picks one of the kernel's two shapes.
#include "quant/per_token_cast.h"
#include "quant/scale_layout.h"

#include "op/op.h"

#include <bit>

namespace tilejit::quant {

/// x's logical columns: K, or twice x's bytes for packed e2m1 (a quantized
/// x of per_token_cast).
static int64_t cols_of(const ops::ShapeArgs &a) {
  return a.dim("K") * (a.dtype("x") == DType::i8 ? 2 : 1);
}
static int64_t cols_of(const ops::Call &c) {
  return c.dim("K") * (c.tensor("x").dtype == DType::i8 ? 2 : 1);
}

/// Whether x is quantized: x_sf passed (per_token_cast only).
static bool quantized_x(const ops::Call &c) {
  return c.op().find_tensor("x_sf") && c.has("x_sf");
}

PerTokenCastSpec per_token_cast_tiling(PerTokenCastSpec spec, int64_t m,
                                       int64_t k, int64_t num_per_channels) {
  // 4096 elements over 128 threads: on the H200 this beat 8192 over 256,
  // 16384 over 256 or 512 and 32768 over 512 (77-82% of copy vs 46-79%).
  constexpr int64_t kTile = 4096;
  spec.threads = 128;
  int64_t group = static_cast<int64_t>(std::bit_ceil(
      static_cast<uint64_t>(std::max<int64_t>(num_per_channels, 1))));
  spec.group = static_cast<int32_t>(group);
  // 512 columns, or fewer where K has no factor 512 (K = 576: 64), so that
  // the last column block is not mostly past the end.
  const int64_t k_factor = k > 0 ? std::min<int64_t>(512, k & -k) : 512;
  spec.block_k = static_cast<int32_t>(std::max<int64_t>(group, k_factor));
  // A last column block partly past the end (K = 576, group 128): the
  // last column of blocks takes only the tail, a block_m x tail box (half
  // a tile), so that no block is half past the end. On the H200 (bf16,
  // packed scales, benchmark grid, steady state, % of copy at 8001 / 4001
  // rows): block_m x tail boxes, every block busy, read 82.2-82.6 /
  // 84.8-84.9; boxes of a whole tile's elements ((block_m x block_k /
  // tail) x tail), which leave half the last column's blocks idle,
  // 79.8-80.8 / 81.3-83.7. Tried and worse: a half-empty last column
  // block (71-74%, timed first in its process); a one-dim grid that gives
  // the tail blocks of their own (70 / 74.5%); rows seen as (K / 32, M, 32)
  // parts, a group reduced over 4 parts (68 / 76%); a block of whole rows,
  // 512 + 64 columns in two boxes (50-74 / 51-65%); rows seen as 9 parts
  // of 64, a group 2 parts and a last group of one, both boxes loaded
  // before either is stored (66 / 70%: 60% more instructions, the 32
  // threads of a row each computing its 5 scales); swapping the grid's
  // dimensions, so that the last column's blocks come between the others
  // (no change).
  if (const int64_t tail = k % spec.block_k;
      tail > 0 && spec.block_k % tail == 0 && num_per_channels < k)
    spec.tail = static_cast<int32_t>(tail);
  if (num_per_channels == k) {
    spec.block_k = spec.group; // one group a row, padded
    // K = parts x p with p a power of two and parts odd: unpadded, a row
    // reshaped to (parts, p) and reduced over both, as long as p holds at
    // least a warp's 16-byte vectors (rounds of threads x vector elements
    // then divide p, and the reduction over parts stays in registers).
    // With K > 2048 a block holds exactly one row (block_m 1), and its
    // accesses need no bounds checks: straight-line vector loads and
    // stores, no per-chunk fallback. On the H200 (bf16, M = 8001, % of
    // copy) that took K = 2560 / 3072 / 6144 / 7168 from 83 / 86 / 81 / 79
    // (checked; 7168 padded to 8192 at 128 registers) to 116-118 / 114 /
    // 107-108 / 106-107 (68 registers at 7168; the copy of the same bytes
    // reaches 3.1-3.8 TB/s at these sizes, the kernel 3.7-4.0). Checked,
    // K = 7168 unpadded fell to 67% (127 registers), so without the
    // promise a thread holds at most 48 elements; with it, 64. More
    // threads lost more than they saved (K = 7168, checked): 256 x 8-byte
    // vectors 58%, 512 x 4-byte 57%, padded 256 threads 65%, 512 61%.
    const int64_t p = k & -k;
    const int64_t vector = 16 / static_cast<int64_t>(size_of(spec.in_dtype));
    const int64_t threads = std::min<int64_t>(128, p / vector);
    const bool one_row = k > 2048;
    if (p != k && p / vector >= 32 && k / threads <= (one_row ? 64 : 48)) {
      spec.group = spec.block_k = static_cast<int32_t>(k);
      spec.threads = static_cast<int32_t>(threads);
      spec.inside = one_row;
    } else if (p != k) {
      // Shorter rows (K = 576 = 9 x 64): rows seen as (parts, p), each
      // thread one vector of every part, at most 20 elements a thread
      // (narrower vectors where needed; 40 with one-element vectors), 256
      // threads. On the H200 (bf16, packed scales, benchmark grid, steady
      // state, % of copy at 8001 / 4001 rows): 4-byte vectors (18 elements,
      // 8 rows a block) read 82.9-84.1 / 82.0-83.3; 8-byte ones (36, 16
      // rows) 80.0-81.0 / 80.1-81.6, with 8 rows (128 threads) 82.7-83.2 /
      // 77.1-80.2; 16-byte ones (72) 60-68. Padded to 1024 it read 53 / 60
      // (timed first in its process). Reducing over the parts before p (4
      // shuffles, not 36) gave 3 points.
      for (int64_t v = vector; v >= 1; v /= 2)
        if (k / p * v <= 20 || (v == 1 && k / p <= 40)) {
          spec.group = spec.block_k = static_cast<int32_t>(k);
          spec.parts = static_cast<int32_t>(k / p);
          spec.block_m =
              static_cast<int32_t>(std::max<int64_t>(1, 256 * v / p));
          spec.threads = static_cast<int32_t>(spec.block_m * p / v);
          spec.vector_bytes = static_cast<int32_t>(
              v * static_cast<int64_t>(size_of(spec.in_dtype)));
          return spec;
        }
    }
  }
  spec.block_m =
      static_cast<int32_t>(std::max<int64_t>(1, kTile / spec.block_k));
  // Fewer rows than give 1024 blocks (about 8 a SM on the H200): halve the
  // tile's rows, down to 2048 elements (16 a thread). On the H200 (bf16,
  // packed scales, benchmark grid, steady state, two runs each) M = 4001,
  // K = 576 went from 630 blocks of 32 x 128 to 1255 of 16 x 128 at group
  // 128 (76.4-77.9 -> 81.9-82.2% of copy) and from 567 blocks of 64 x 64 to
  // 1134 of 32 x 64 at groups 32 and 64 (81-82 -> 86-87%); M = 8001 keeps
  // its tiles (1134-1255 blocks; 16 x 128 read 79% there, 32 x 128 80-81%).
  constexpr int64_t kMinBlocks = 1024;
  const int64_t col_blocks = (k + spec.block_k - 1) / spec.block_k;
  while (spec.block_m > 1 && spec.block_m * spec.block_k >= 2 * 2048 &&
         (m + spec.block_m - 1) / spec.block_m * col_blocks < kMinBlocks)
    spec.block_m /= 2;
  return spec;
}

static void check_num_per_channels(std::string_view op, int64_t g, int64_t k) {
  bool small = g == 16 || g == 32 || g == 64 || g == 128;
  if (!small && !(g == k && k % 64 == 0 && k > 0))
    throw UserError(fmt::format("{}: argument 'num_per_channels' is {}; "
                                "requires 16, 32, 64, 128, or K = {} when K "
                                "is a multiple of 64",
                                op, g, k));
  if (g == k && k > 8192)
    throw UserError(fmt::format("{}: argument 'num_per_channels' is K = {}; "
                                "one group a row is supported up to K = 8192",
                                op, k));
}

/// A quantized x (§4.3, per_token_cast only): x e4m3 or packed e2m1 with
/// its scales x_sf of x_block_m x x_block_k, all three or none.
static void check_quantized_x(const ops::Call &c, int64_t g) {
  const std::string &op = c.op().name;
  if (!c.op().find_tensor("x_sf"))
    return;
  const DType x = c.tensor("x").dtype;
  const bool quantized = x == DType::e4m3 || x == DType::i8;
  const int64_t bm = c.integer("x_block_m"), bk = c.integer("x_block_k");
  if (quantized != c.has("x_sf"))
    throw UserError(fmt::format(
        "{}: argument 'x_sf' is {}; requires it {} (x has dtype {})", op,
        c.has("x_sf") ? "given" : "None",
        quantized ? "with a quantized x" : "None with a bf16 or f32 x",
        name_of(x)));
  if (!quantized) {
    if (bm != 0 || bk != 0)
      throw UserError(fmt::format("{}: argument 'x_block_size' is ({}, {}); "
                                  "requires (0, 0) (None) for a bf16 or f32 x",
                                  op, bm, bk));
    return;
  }
  if ((bm != 1 && bm != 32 && bm != 128) ||
      (bk != 16 && bk != 32 && bk != 64 && bk != 128))
    throw UserError(fmt::format("{}: argument 'x_block_size' is ({}, {}); "
                                "requires x_block_m 1, 32 or 128 and "
                                "x_block_k 16, 32, 64 or 128",
                                op, bm, bk));
  if (g == cols_of(c) || c.choice("fmt") == "e5m6")
    throw UserError(fmt::format("{}: argument 'x' is a quantized {}; "
                                "requires fmt e4m3 or e2m1 in groups of 16 "
                                "to 128, less than K = {}",
                                op, name_of(x), cols_of(c)));
}

/// per_token_cast's stochastic_cast (2.1): groups of 16 to 128 (a row's
/// columns in quads), K a multiple of 4, not e5m6.
static void check_stochastic(const ops::Call &c, int64_t g) {
  if (c.op().name != "per_token_cast" || !c.flag("stochastic_cast"))
    return;
  if (c.choice("fmt") == "e5m6" || g == cols_of(c) || cols_of(c) % 4 != 0)
    throw UserError(fmt::format("{}: argument 'stochastic_cast' is true with "
                                "fmt {}, num_per_channels = {} and K = {}; "
                                "requires fmt e4m3 or e2m1, groups of 16 to "
                                "128 less than K, and K % 4 == 0",
                                c.op().name, c.choice("fmt"), g, cols_of(c)));
}

static void check(const ops::Call &c) {
  const std::string &op = c.op().name;
  const int64_t g = c.integer("num_per_channels");
  check_num_per_channels(op, g, cols_of(c));
  check_quantized_x(c, g);
  check_stochastic(c, g);
  if (c.choice("fmt") == "e2m1" && cols_of(c) % 2 != 0)
    throw UserError(fmt::format("{}: argument 'x' has K = {}; fmt e2m1 "
                                "requires K even (two codes a byte)",
                                op, cols_of(c)));
  if (c.choice("fmt") == "e5m6") {
    if (c.op().name != "per_token_cast")
      throw UserError(fmt::format("{}: argument 'fmt' is 'e5m6'; requires "
                                  "e4m3 or e2m1 (e5m6 only with "
                                  "per_token_cast)",
                                  op));
    if (g != c.dim("K"))
      throw UserError(fmt::format("{}: argument 'num_per_channels' is {}; "
                                  "fmt e5m6 requires K = {} (one scale a "
                                  "row)",
                                  op, g, c.dim("K")));
    if (c.tensor("out").data % 4 != 0)
      throw UserError(fmt::format("{}: argument 'out' starts at {:#x}; fmt "
                                  "e5m6 requires a 4-byte aligned address "
                                  "(it is written as 32-bit words)",
                                  op, c.tensor("out").data));
  }
  // The variants take groups of a part of a row only (TileKernels' check).
  if (op != "per_token_cast" &&
      ((g != 16 && g != 32 && g != 64 && g != 128) || g == c.dim("K")))
    throw UserError(fmt::format("{}: argument 'num_per_channels' is {}; "
                                "requires 16, 32, 64 or 128, less than K = {}",
                                op, g, c.dim("K")));
  if (c.op().find_tensor("sf")) {
    for (const char *flag :
         {"use_tma_aligned_col_major_sf", "use_packed_ue8m0"})
      if (c.flag(flag))
        throw UserError(fmt::format("{}: argument '{}' is true; requires "
                                    "false (a precomputed sf is a row-major "
                                    "f32)",
                                    op, flag));
  }
  check_sf_flags(c);
  if (c.flag("use_e4m3_sf")) {
    for (const char *flag : {"round_sf", "use_packed_ue8m0"})
      if (c.flag(flag))
        throw UserError(fmt::format("{}: arguments 'use_e4m3_sf' and '{}' "
                                    "are both true; requires at most one",
                                    op, flag));
    if (c.choice("fmt") == "e5m6")
      throw UserError(fmt::format("{}: argument 'use_e4m3_sf' is true with "
                                  "fmt 'e5m6'; requires fmt e4m3 or e2m1",
                                  op));
  }
}

template <CastMode mode> static PerTokenCastSpec spec(const ops::Call &c) {
  PerTokenCastSpec s;
  s.mode = mode;
  s.in_dtype = c.tensor("x").dtype;
  s.e2m1 = c.choice("fmt") == "e2m1";
  s.e5m6 = c.choice("fmt") == "e5m6";
  s.round_sf = c.flag("round_sf");
  s.sf_layout = sf_layout_of(c);
  s.e4m3_sf = c.flag("use_e4m3_sf");
  if constexpr (mode == CastMode::both) { // per_token_cast's own
    s.stochastic = c.flag("stochastic_cast");
    // The integer pipe's lighter forms (an H100, session 68, one process,
    // 8001 x 7168: stochastic e4m3 101.1 -> 77.5 us, e2m1 by 32 63.6 ->
    // 55.8 us)
    s.stochastic_convert = s.stochastic;
    s.e2m1_least = s.e2m1;
  }
  if (s.e5m6) {
    // As the original: 128 threads, whole rows padded to 1024 columns,
    // 4096 elements a tile where that divides.
    const int64_t k = std::max<int64_t>(c.dim("K"), 1);
    s.threads = 128;
    s.block_k = static_cast<int32_t>((k + 1023) / 1024 * 1024);
    s.block_m = 4096 % s.block_k == 0 ? 4096 / s.block_k : 1;
    s.group = s.block_k;
  } else {
    s = per_token_cast_tiling(s, c.dim("M"), cols_of(c),
                              c.integer("num_per_channels"));
  }
  if (quantized_x(c)) { // a quantized x: boxes without a tail box
    s.x_bm = static_cast<int32_t>(c.integer("x_block_m"));
    s.x_group = static_cast<int32_t>(c.integer("x_block_k"));
    s.x_packed = c.tensor("x_sf").dtype == DType::i32;
    s.tail = 0;
  }
  // The tiling's vectors (16 bytes unless it says less) where x's and
  // out's rows are aligned to them.
  const int vector_bytes = s.vector_bytes ? s.vector_bytes : 16;
  s.vector_bytes = ops::rows_aligned(c.tensor("x"), vector_bytes) &&
                           (mode == CastMode::sf_only ||
                            ops::rows_aligned(c.tensor("out"), vector_bytes))
                       ? vector_bytes
                       : 0;
  return s;
}

/// With parts, (parts, M, p) views of x and out: part j of row m is columns
/// [j p, (j + 1) p). Packed scales: byte j of int32 (m, w) is group 4w + j
/// of row m, a (M, W, 4) u8 view.
/// A given sf: each scale repeated (repeated_scales).
static void views(const ops::Call &c, const PerTokenCastSpec &s,
                  ops::KernelArgs &args) {
  if (s.e5m6) // the u8 (M, 3K / 2) as its u32 words (M, 3K / 8)
    args.tensor("out_words", ops::as_words(c.tensor("out")));
  if (s.mode == CastMode::precomputed_sf)
    args.tensor("sf", repeated_scales(c.tensor("sf"), s.threads));
  if (s.parts > 0) {
    const rt::TensorView &x = c.tensor("x");
    const int64_t p = c.dim("K") / s.parts;
    const int64_t shape[3] = {s.parts, c.dim("M"), p};
    const int64_t x_strides[3] = {p, x.strides[0], 1};
    args.tensor("x_parts",
                rt::TensorView::strided(x.data, x.dtype, shape, x_strides));
  }
  if (s.parts > 0 && s.mode != CastMode::sf_only) {
    const rt::TensorView &out = c.tensor("out");
    const int64_t p = c.dim("K") / s.parts;
    // e2m1: p / 2 bytes a part.
    const int64_t q = s.e2m1 ? p / 2 : p;
    const int64_t out_shape[3] = {s.parts, c.dim("M"), q};
    const int64_t out_strides[3] = {q, out.strides[0], 1};
    args.tensor("out_parts", rt::TensorView::strided(out.data, out.dtype,
                                                     out_shape, out_strides));
  }
  if (s.sf_layout == SfLayout::packed_ue8m0)
    args.tensor("out_sf", ops::as_bytes(c.tensor("out_sf")));
  // A quantized x's scales as (M', threads, nK), or packed as the bytes
  // (M', threads, W, 4): the stride-0 dimension lets a load take a scale
  // as many times as there are threads (dequant_dsl.h).
  if (s.x_bm > 0) {
    const rt::TensorView &sf = c.tensor("x_sf");
    args.tensor("x_sf", ops::repeated(s.x_packed ? ops::as_bytes(sf) : sf, 1,
                                      s.threads));
  }
}

/// The three ops: their name, summary, tensors and reference; the rest is
/// common.
static ops::OpDef
declare(std::string name, std::string summary,
        std::vector<ops::TensorDecl> tensors,
        std::function<std::vector<ref::HostTensor>(const ops::HostCall &)>
            reference,
        std::vector<ops::ParamDecl> extra_params = {}) {
  std::vector<ops::ParamDecl> params = with_e4m3_sf(with_sf_flags(
      {ops::choice("fmt", "e4m3", {"e4m3", "e2m1", "e5m6"},
                   "the output format (e5m6: per_token_cast, one group "
                   "a row)"),
       ops::integer("num_per_channels", 128, 1, 1 << 30,
                    "channels a group: 16, 32, 64, 128 or K")}));
  params.insert(params.end(), extra_params.begin(), extra_params.end());
  return {
      .name = std::move(name),
      .summary = std::move(summary),
      .tensors = std::move(tensors),
      .params = std::move(params),
      .cli_shape = "M, K",
      .default_shape = {8064, 7168},
      .check = check,
      .shape_of =
          [](std::string_view tensor, const ops::ShapeArgs &a) {
            const int64_t m = a.dim("M"), k = cols_of(a);
            if (tensor == "x_sf") { // a quantized x's, any strides
              // (Checked before: at least 1.)
              const int64_t bm = std::max<int64_t>(1, a.integer("x_block_m")),
                            bk = std::max<int64_t>(1, a.integer("x_block_k"));
              return sf_shape((m + bm - 1) / bm, (k + bk - 1) / bk,
                              a.dtype("x_sf") == DType::i32
                                  ? SfLayout::packed_ue8m0
                                  : SfLayout::row_major);
            }
            if (tensor == "out" && a.choice("fmt") == "e5m6")
              return ops::TensorShape{
                  DType::u8, {m, k * 3 / 2}, {k * 3 / 2, 1}};
            if (tensor == "out")
              return a.choice("fmt") == "e2m1"
                         ? ops::TensorShape{DType::i8, {m, k / 2}, {k / 2, 1}}
                         : ops::TensorShape{DType::e4m3, {m, k}, {k, 1}};
            const int64_t g = a.integer("num_per_channels");
            const SfLayout layout =
                tensor == "sf" ? SfLayout::row_major : sf_layout_of(a);
            return a.flag("use_e4m3_sf")
                       ? e4m3_sf_shape(m, (k + g - 1) / g, layout)
                       : sf_shape(m, (k + g - 1) / g, layout);
          },
      .reference = std::move(reference)};
}

static const ops::TensorDecl kX = ops::input(
    "x", {DType::bf16, DType::f32}, "M, K", ops::Layout::inner_contiguous);
static const ops::TensorDecl kOut = ops::output(
    "out", {DType::e4m3, DType::i8, DType::u8}, "", ops::Layout::contiguous,
    "e4m3 (M, K), int8 (M, K / 2) for e2m1, or uint8 (M, 3K / 2) for e5m6");
static const ops::TensorDecl kOutSf = ops::output(
    "out_sf", {DType::f32, DType::i32, DType::e4m3}, "", ops::Layout::as_shaped,
    "scales; layout by the flags (§3.3), e4m3 with use_e4m3_sf");

const ops::OpDef &per_token_cast_op() {
  static const ops::OpDef op = ops::make_op<PerTokenCastSpec>(
      declare(
          "per_token_cast",
          "fp8 e4m3 or packed fp4 e2m1 quantization of (M, K) bf16/f32 "
          "rows (or of quantized ones, re-quantized) in groups of "
          "num_per_channels channels, with scales",
          {ops::input("x", {DType::bf16, DType::f32, DType::e4m3, DType::i8},
                      "M, K", ops::Layout::inner_contiguous,
                      "bf16/f32 (M, K), or quantized: e4m3 (M, K) or "
                      "int8 (M, K / 2) of packed e2m1 with x_sf"),
           ops::absent_by_default(ops::optional_input(
               "x_sf", {DType::f32, DType::i32}, "", ops::Layout::strided,
               "a quantized x's scales of x_block_m x x_block_k: f32 "
               "of any strides, or packed UE8M0 int32")),
           kOut, kOutSf},
          [](const ops::HostCall &c) {
            std::optional<BlockSize> block;
            CastInput x = c.tensor("x");
            if (c.has("x_sf")) {
              block = BlockSize{c.integer("x_block_m"), c.integer("x_block_k")};
              x = QuantTensor{c.tensor("x"), c.tensor("x_sf")};
            }
            QuantTensor q = per_token_cast_ref(
                x, c.choice("fmt"), c.integer("num_per_channels"), block,
                c.flag("use_tma_aligned_col_major_sf"), c.flag("round_sf"),
                c.flag("use_packed_ue8m0"), c.flag("use_e4m3_sf"),
                c.flag("stochastic_cast"));
            return std::vector{q.data, q.sf};
          },
          {ops::integer("x_block_m", 0, 0, 1 << 30,
                        "a quantized x's scale rows: 1, 32 or 128 (0: "
                        "x is not quantized)"),
           ops::integer("x_block_k", 0, 0, 1 << 30,
                        "a quantized x's scale channels: 16 to 128"),
           ops::flag("stochastic_cast", false,
                     "2.1: codes rounded with the quads' hashed random bits "
                     "(software; not bit-identical to Blackwell)")}),
      {spec<CastMode::both>, per_token_cast_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(per_token_cast_op);

const ops::OpDef &per_token_cast_with_sf_only_op() {
  static const ops::OpDef op = ops::make_op<PerTokenCastSpec>(
      declare("per_token_cast_with_sf_only", "per_token_cast's scales only",
              {kX, kOutSf},
              [](const ops::HostCall &c) {
                if (c.flag("use_e4m3_sf")) // the scales of the full cast
                  return std::vector{
                      per_token_cast_ref(c.tensor("x"), c.choice("fmt"),
                                         c.integer("num_per_channels"),
                                         std::nullopt,
                                         c.flag("use_tma_aligned_col_major_sf"),
                                         false, false, true)
                          .sf};
                return std::vector{per_token_cast_with_sf_only_ref(
                    c.tensor("x"), c.choice("fmt"),
                    c.integer("num_per_channels"), std::nullopt,
                    c.flag("use_tma_aligned_col_major_sf"), c.flag("round_sf"),
                    c.flag("use_packed_ue8m0"))};
              }),
      {spec<CastMode::sf_only>, per_token_cast_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(per_token_cast_with_sf_only_op);

const ops::OpDef &per_token_cast_with_precomputed_sf_op() {
  static const ops::OpDef op = ops::make_op<PerTokenCastSpec>(
      declare("per_token_cast_with_precomputed_sf",
              "per_token_cast's data with given row-major f32 scales "
              "(sf_inv = 1 / sf)",
              {kX,
               ops::input("sf", {DType::f32, DType::e4m3}, "",
                          ops::Layout::contiguous,
                          "row-major f32 (M, ceil(K / num_per_channels)), "
                          "e4m3 with use_e4m3_sf"),
               kOut},
              [](const ops::HostCall &c) {
                return std::vector{per_token_cast_with_precomputed_sf_ref(
                    c.tensor("x"), c.choice("fmt"),
                    c.integer("num_per_channels"), c.tensor("sf"), std::nullopt,
                    c.flag("use_tma_aligned_col_major_sf"), c.flag("round_sf"),
                    c.flag("use_packed_ue8m0"))};
              }),
      {spec<CastMode::precomputed_sf>, per_token_cast_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(per_token_cast_with_precomputed_sf_op);

void per_token_cast(const rt::TensorView &x, std::string_view fmt_name,
                    int64_t num_per_channels, const rt::TensorView &out,
                    const rt::TensorView &out_sf,
                    bool use_tma_aligned_col_major_sf, bool round_sf,
                    bool use_packed_ue8m0, bool use_e4m3_sf,
                    bool stochastic_cast, CUstream stream) {
  per_token_cast_op().call({x, ops::absent(), out, out_sf},
                           {std::string(fmt_name), num_per_channels,
                            use_tma_aligned_col_major_sf, round_sf,
                            use_packed_ue8m0, use_e4m3_sf, int64_t{0},
                            int64_t{0}, stochastic_cast},
                           stream);
}

void per_token_cast(const rt::TensorView &x, const rt::TensorView &x_sf,
                    int64_t x_block_m, int64_t x_block_k,
                    std::string_view fmt_name, int64_t num_per_channels,
                    const rt::TensorView &out, const rt::TensorView &out_sf,
                    bool use_tma_aligned_col_major_sf, bool round_sf,
                    bool use_packed_ue8m0, bool use_e4m3_sf,
                    bool stochastic_cast, CUstream stream) {
  per_token_cast_op().call({x, x_sf, out, out_sf},
                           {std::string(fmt_name), num_per_channels,
                            use_tma_aligned_col_major_sf, round_sf,
                            use_packed_ue8m0, use_e4m3_sf, x_block_m, x_block_k,
                            stochastic_cast},
                           stream);
}

void per_token_cast_with_sf_only(const rt::TensorView &x,
                                 std::string_view fmt_name,
                                 int64_t num_per_channels,
                                 const rt::TensorView &out_sf,
                                 bool use_tma_aligned_col_major_sf,
                                 bool round_sf, bool use_packed_ue8m0,
                                 bool use_e4m3_sf, CUstream stream) {
  per_token_cast_with_sf_only_op().call(
      {x, out_sf},
      {std::string(fmt_name), num_per_channels, use_tma_aligned_col_major_sf,
       round_sf, use_packed_ue8m0, use_e4m3_sf},
      stream);
}

void per_token_cast_with_precomputed_sf(
    const rt::TensorView &x, std::string_view fmt_name,
    int64_t num_per_channels, const rt::TensorView &sf,
    const rt::TensorView &out, bool use_tma_aligned_col_major_sf, bool round_sf,
    bool use_packed_ue8m0, bool use_e4m3_sf, CUstream stream) {
  per_token_cast_with_precomputed_sf_op().call(
      {x, sf, out},
      {std::string(fmt_name), num_per_channels, use_tma_aligned_col_major_sf,
       round_sf, use_packed_ue8m0, use_e4m3_sf},
      stream);
}

} // namespace tilejit::quant
