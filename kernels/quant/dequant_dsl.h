// dequant_dsl.h - §3.6 step 1 in the tile DSL: a tile of e4m3, packed e2m1
// or E5M6 data times its bm x bk block scales, in f32; for the dequantizing
// kernels (per_token_cast_back, cast_back) and the re-quantizing one
// (per_token_cast of a quantized x).
#pragma once

#include "tilejit/compiler/dsl.h"

#include <algorithm>

namespace tilejit::quant {

/// Quantized data and its scales as a kernel takes them.
struct QuantizedInput {
  /// e4m3 (M, K), the bytes (M, K / 2) of packed e2m1, or E5M6's u32 words
  /// (M, 3K / 8)
  dsl::Tensor data;
  /// f32 or e4m3 (M', bm, nK) or, packed, the bytes (M', bm, W, 4) of the
  /// int32 words (group 4w + j is byte j of word w); the bm dimension of
  /// stride 0 (ops::repeated), so that a load can take a scale several
  /// times
  dsl::Tensor sf;
  bool e2m1 = false, e5m6 = false, packed = false;
  int64_t bm = 1;    ///< rows a scale: 1, or a multiple or divisor of rows
  int64_t group = 0; ///< channels a scale; 0: one a row
  /// The extent of sf's stride-0 dimension: the most copies a load of a
  /// scale may take (bm, or more)
  int64_t repeats = 1;
  int64_t threads = 128;
};

/// The scales of the rows x cols tile at (m0, k0) of `in` as (srows, 1,
/// groups), for dequantized_as. Loaded one a thread (relayout 1): a few
/// bytes a row, they leave the data's vectors alone; a row of scales shared
/// by rows is read `copies` times through the stride-0 dimension (a load
/// has an element a thread) and taken back to one by a maximum.
inline dsl::Value tile_scales(dsl::KernelBuilder &k, const QuantizedInput &in,
                              dsl::Value m0, dsl::Value k0, int64_t rows,
                              int64_t cols) {
  // The tile's groups: cols / group of them, or one (a group spans it).
  const bool several = in.group > 0 && in.group < cols;
  const int64_t groups = several ? cols / in.group : 1;
  auto first = in.group > 0 ? k0 / k.index(in.group) : k.index(0);
  // `srows` rows of scales, each for `per` of the tile's rows.
  const int64_t per = std::min(rows, in.bm), srows = rows / per;
  const int64_t copies = std::min<int64_t>(
      in.repeats, std::max<int64_t>(1, in.threads / (srows * groups)));
  auto r0 = m0 / k.index(in.bm), zero = k.index(0);
  auto one_copy = [&](dsl::Value s, int dim) {
    return copies > 1 ? k.reduce_max(s, dim) : s;
  };
  dsl::Value scale; // (srows, 1, groups)
  if (in.packed) {
    // `first` is a multiple of min(groups, 4): whole words, or one's bytes.
    auto four = k.index(4);
    const int64_t words = std::max<int64_t>(1, groups / 4);
    auto codes = one_copy(
        k.cast(k.relayout(
                   k.load(in.sf,
                          {r0, zero, first / four, first - first / four * four},
                          {srows, copies, words, std::min<int64_t>(groups, 4)}),
                   1),
               DType::u32),
        1);
    // UE8M0: 2^(code - 127), the f32 whose exponent field is the code.
    scale = k.bitcast(
        k.shl(k.reshape(codes, {srows, 1, groups}), k.constant(23, DType::u32)),
        DType::f32);
  } else {
    // (An e4m3 scale decodes exactly.)
    scale =
        k.reshape(one_copy(k.cast(k.relayout(k.load(in.sf, {r0, zero, first},
                                                    {srows, copies, groups}),
                                             1),
                                  DType::f32),
                           1),
                  {srows, 1, groups});
  }
  return scale;
}

/// The rows x cols tile at (m0, k0) of `in`'s data as stored: e4m3, the
/// bytes of packed e2m1 or E5M6's words (a kernel may keep it in shared
/// memory and decode it again).
inline dsl::Value stored_data(dsl::KernelBuilder &k, const QuantizedInput &in,
                              dsl::Value m0, dsl::Value k0, int64_t rows,
                              int64_t cols) {
  if (in.e5m6) // 8 codes in 3 words
    return k.load(in.data, {m0, k0 / k.index(8) * k.index(3)},
                  {rows, cols / 8 * 3});
  if (in.e2m1) // two codes a byte, the even element in the low nibble
    return k.load(in.data, {m0, k0 / k.index(2)}, {rows, cols / 2});
  return k.load(in.data, {m0, k0}, {rows, cols});
}

/// Stored data (stored_data's) times its scales (tile_scales'): the f32
/// rows x cols tile.
inline dsl::Value dequantized_as(dsl::KernelBuilder &k,
                                 const QuantizedInput &in, dsl::Value data,
                                 dsl::Value scale, int64_t rows, int64_t cols) {
  dsl::Value v = in.e5m6   ? k.from_e5m6(k.unpack_e5m6(data))
                 : in.e2m1 ? k.from_e2m1(k.unpack_nibbles(data))
                           : k.cast(data, DType::f32);
  const int64_t srows = scale.shape()[0], groups = scale.shape()[2];
  return k.reshape(k.reshape(v, {srows, rows / srows, groups, cols / groups}) *
                       k.reshape(scale, {srows, 1, groups, 1}),
                   {rows, cols});
}

/// The f32 rows x cols tile at (m0, k0) of `in`: data x scale. The tile's
/// rows are a multiple of bm (bm rows a scale row), or within one scale row
/// (m0 a multiple of rows, rows dividing bm); its columns hold whole groups,
/// or lie within one (k0 a multiple of cols).
inline dsl::Value dequantized(dsl::KernelBuilder &k, const QuantizedInput &in,
                              dsl::Value m0, dsl::Value k0, int64_t rows,
                              int64_t cols) {
  return dequantized_as(k, in, stored_data(k, in, m0, k0, rows, cols),
                        tile_scales(k, in, m0, k0, rows, cols), rows, cols);
}

} // namespace tilejit::quant
