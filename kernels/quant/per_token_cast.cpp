// per_token_cast.cpp - Host entry of per_token_cast: validate, specialise,
// get or compile, launch.
#include "quant/per_token_cast.h"

#include "common/abi.h"
#include "common/check.h"
#include "common/jit.h"
#include "common/kernel_table.h"

#include "tilejit/error.h"
#include "tilejit/runtime/launch.h"

#include <fmt/format.h>

#include <bit>

namespace tilejit::quant {

static constexpr std::string_view kOp = "per_token_cast";

rt::SpecKey per_token_cast_key(const PerTokenCastSpec &spec) {
  rt::SpecKey key = ops::make_key("per_token_cast");
  key.add("in_dtype", name_of(spec.in_dtype))
      .add("group", std::to_string(spec.group))
      .add("block_m", std::to_string(spec.block_m))
      .add("block_k", std::to_string(spec.block_k))
      .add("threads", std::to_string(spec.threads))
      .add("round_sf", std::to_string(spec.round_sf))
      .add("sf_layout", std::to_string(static_cast<int>(spec.sf_layout)))
      .add("vector_bytes", std::to_string(spec.vector_bytes))
      .add("inside", std::to_string(spec.inside))
      .add("parts", std::to_string(spec.parts))
      .add("tail", std::to_string(spec.tail));
  return key;
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

void check_num_per_channels(int64_t g, int64_t k) {
  bool small = g == 16 || g == 32 || g == 64 || g == 128;
  if (!small && !(g == k && k % 64 == 0 && k > 0))
    throw UserError(fmt::format("{}: argument 'num_per_channels' is {}; "
                                "requires 16, 32, 64, 128, or K = {} when K "
                                "is a multiple of 64",
                                kOp, g, k));
  if (g == k && k > 8192)
    throw UserError(fmt::format("{}: argument 'num_per_channels' is K = {}; "
                                "one group a row is supported up to K = 8192",
                                kOp, k));
}

static int64_t align4(int64_t v) { return (v + 3) / 4 * 4; }

namespace {
struct Checked {
  int64_t m, k, groups;
};
} // namespace

static Checked check_args(const rt::TensorView &x, std::string_view fmt_name,
                          int64_t g, const rt::TensorView &out,
                          const rt::TensorView &out_sf, bool col_major,
                          bool round_sf, bool packed) {
  if (fmt_name != "e4m3")
    throw UserError(fmt::format("{}: argument 'fmt' is '{}'; this version "
                                "supports 'e4m3' only",
                                kOp, fmt_name));
  ops::check_rank(kOp, "x", x, 2);
  if (x.dtype != DType::bf16 && x.dtype != DType::f32)
    throw UserError(fmt::format("{}: argument 'x' has dtype {}; requires bf16 "
                                "or f32",
                                kOp, name_of(x.dtype)));
  const int64_t m = x.shape[0], k = x.shape[1];
  if (x.strides[1] != 1 && k > 1)
    throw UserError(fmt::format("{}: argument 'x' has strides [{}, {}]; "
                                "requires stride[1] = 1",
                                kOp, x.strides[0], x.strides[1]));
  check_num_per_channels(g, k);
  if (packed && (!col_major || !round_sf))
    throw UserError(fmt::format("{}: argument 'use_packed_ue8m0' is true; "
                                "requires use_tma_aligned_col_major_sf and "
                                "round_sf",
                                kOp));
  if (out.rank != 2 || out.dtype != DType::e4m3 || out.shape[0] != m ||
      out.shape[1] != k || !out.is_contiguous())
    throw UserError(fmt::format("{}: argument 'out' is {}; requires a "
                                "contiguous e4m3 [{}, {}]",
                                kOp, out.to_string(), m, k));
  const int64_t groups = (k + g - 1) / g;
  DType sf_dtype = packed ? DType::i32 : DType::f32;
  int64_t sf_cols = packed ? (groups + 3) / 4 : groups;
  bool sf_ok = out_sf.rank == 2 && out_sf.dtype == sf_dtype &&
               out_sf.shape[0] == m && out_sf.shape[1] == sf_cols;
  std::string want;
  if (col_major) {
    sf_ok = sf_ok && (m <= 1 || out_sf.strides[0] == 1) &&
            (sf_cols <= 1 || out_sf.strides[1] >= align4(m));
    want = fmt::format("a {} [{}, {}] with strides [1, >= {}]",
                       name_of(sf_dtype), m, sf_cols, align4(m));
  } else {
    sf_ok = sf_ok && out_sf.is_contiguous();
    want =
        fmt::format("a contiguous {} [{}, {}]", name_of(sf_dtype), m, sf_cols);
  }
  if (!sf_ok)
    throw UserError(fmt::format("{}: argument 'out_sf' is {}; requires {}", kOp,
                                out_sf.to_string(), want));
  ops::check_pointer(kOp, "x", x);
  ops::check_pointer(kOp, "out", out);
  ops::check_pointer(kOp, "out_sf", out_sf);
  return {m, k, groups};
}

void per_token_cast(const rt::TensorView &x, std::string_view fmt_name,
                    int64_t num_per_channels, const rt::TensorView &out,
                    const rt::TensorView &out_sf,
                    bool use_tma_aligned_col_major_sf, bool round_sf,
                    bool use_packed_ue8m0, CUstream stream) {
  Checked c =
      check_args(x, fmt_name, num_per_channels, out, out_sf,
                 use_tma_aligned_col_major_sf, round_sf, use_packed_ue8m0);
  if (c.m == 0 || c.k == 0)
    return;
  PerTokenCastSpec spec;
  spec.in_dtype = x.dtype;
  spec.round_sf = round_sf;
  spec.sf_layout = use_packed_ue8m0               ? SfLayout::packed_ue8m0
                   : use_tma_aligned_col_major_sf ? SfLayout::col_major
                                                  : SfLayout::row_major;
  spec = per_token_cast_tiling(spec, c.m, c.k, num_per_channels);
  // The tiling's vectors (16 bytes unless it says less) where x's and
  // out's rows are aligned to them.
  const int vector_bytes = spec.vector_bytes ? spec.vector_bytes : 16;
  spec.vector_bytes =
      ops::rows_aligned(x, vector_bytes) && ops::rows_aligned(out, vector_bytes)
          ? vector_bytes
          : 0;

  static ops::KernelTable<PerTokenCastSpec> table;
  const ops::LoadedKernel &kernel =
      table.get(spec, [&]() -> const ops::LoadedKernel & {
        return ops::load_kernel(per_token_cast_key(spec),
                                [&] { return per_token_cast_kernel(spec); });
      });

  rt::ArgPack args;
  if (spec.parts > 0) {
    // (parts, M, p) views of x and out: part j of row m is columns
    // [j p, (j + 1) p).
    const int64_t p = c.k / spec.parts;
    const int64_t shape[3] = {spec.parts, c.m, p};
    const int64_t x_strides[3] = {p, x.strides[0], 1};
    const int64_t out_strides[3] = {p, out.strides[0], 1};
    ops::push_tensor(
        args, rt::TensorView::strided(x.data, x.dtype, shape, x_strides));
    ops::push_tensor(
        args, rt::TensorView::strided(out.data, out.dtype, shape, out_strides));
  } else {
    ops::push_tensor(args, x);
    ops::push_tensor(args, out);
  }
  if (spec.sf_layout == SfLayout::packed_ue8m0) {
    // Byte j of int32 (m, w) is group 4w + j of row m: a (M, W, 4) u8 view.
    const int64_t shape[3] = {out_sf.shape[0], out_sf.shape[1], 4};
    const int64_t strides[3] = {4 * out_sf.strides[0], 4 * out_sf.strides[1],
                                1};
    ops::push_tensor(
        args, rt::TensorView::strided(out_sf.data, DType::u8, shape, strides));
  } else {
    ops::push_tensor(args, out_sf);
  }
  rt::LaunchConfig config;
  config.grid = {static_cast<uint32_t>((c.m + spec.block_m - 1) / spec.block_m),
                 static_cast<uint32_t>((c.k + spec.block_k - 1) / spec.block_k),
                 1};
  config.block = {static_cast<uint32_t>(spec.threads), 1, 1};
  config.stream = stream;
  rt::launch(kernel.function, config, args.data());
}

} // namespace tilejit::quant
