// scale_layout.h - §3.3's three scale-factor layouts as the ops declare them
// (OpDef::shape_of): what a call's scale tensor is checked against and what
// the tests and the CLI allocate.
#pragma once

#include "common/check.h"
#include "op/op_def.h"
#include "quant/reference.h"

#include "tilejit/error.h"

#include <fmt/format.h>
#include <vector>

namespace tilejit::quant {

/// What a quantizing call computes: data and scales, the scales only
/// (`*_with_sf_only`), or the data from given scales
/// (`*_with_precomputed_sf`).
enum class CastMode : int32_t { both, sf_only, precomputed_sf };

/// A precomputed row-major f32 sf (M', nK) as the kernels take it
/// (precomputed_sf_inv, scale_dsl.h): (M', nK, threads) with strides
/// (stride[0], stride[1], 0), each scale repeated.
inline rt::TensorView repeated_scales(const rt::TensorView &sf,
                                      int64_t threads) {
  return ops::repeated(sf, 2, threads);
}

/// `params` followed by the quantizing ops' three scale flags
/// (use_tma_aligned_col_major_sf, round_sf, use_packed_ue8m0; the layout
/// they ask for is sf_layout_of, reference.h).
inline std::vector<ops::ParamDecl>
with_sf_flags(std::vector<ops::ParamDecl> params) {
  params.push_back(ops::flag("use_tma_aligned_col_major_sf", false,
                             "scales column-major, rows padded to 4"));
  params.push_back(
      ops::flag("round_sf", false, "scales rounded up to powers of two"));
  params.push_back(ops::flag("use_packed_ue8m0", false,
                             "scales as UE8M0 bytes, four to an int32"));
  return params;
}

/// `params` followed by the flag of TileKernels 2.1's E4M3 scales.
inline std::vector<ops::ParamDecl>
with_e4m3_sf(std::vector<ops::ParamDecl> params) {
  params.push_back(ops::flag("use_e4m3_sf", false,
                             "scales as e4m3 (2.1): e4m3(amax / fmt_max), "
                             "exclusive with round_sf"));
  return params;
}

/// UserError unless packed scales come with column-major, rounded ones.
inline void check_sf_flags(const ops::Call &c) {
  if (c.flag("use_packed_ue8m0") &&
      (!c.flag("use_tma_aligned_col_major_sf") || !c.flag("round_sf")))
    throw UserError(fmt::format("{}: argument 'use_packed_ue8m0' is true; "
                                "requires use_tma_aligned_col_major_sf and "
                                "round_sf",
                                c.op().name));
}

/// The layout a call's (or a shape query's) flags ask for.
template <class Args> SfLayout sf_layout_of(const Args &a) {
  return sf_layout_of(a.flag("use_tma_aligned_col_major_sf"),
                      a.flag("use_packed_ue8m0"));
}

/// Scales of `rows` x `groups`: f32 row-major (groups, 1); f32 strided
/// (1, align(rows, 4)); packed, int32 (rows, ceil(groups / 4)) with those
/// strides, four UE8M0 bytes a word.
inline ops::TensorShape sf_shape(int64_t rows, int64_t groups,
                                 SfLayout layout) {
  const int64_t padded = (rows + 3) / 4 * 4;
  switch (layout) {
  case SfLayout::col_major:
    return {DType::f32, {rows, groups}, {1, padded}};
  case SfLayout::packed_ue8m0:
    return {DType::i32, {rows, (groups + 3) / 4}, {1, padded}};
  case SfLayout::row_major:
    break;
  }
  return {DType::f32, {rows, groups}, {groups, 1}};
}

/// TileKernels 2.1's E4M3 scales (use_e4m3_sf) of `rows` x `groups`: e4m3
/// row-major, or column-major with 16-byte columns, strides
/// (1, align(rows, 16)).
inline ops::TensorShape e4m3_sf_shape(int64_t rows, int64_t groups,
                                      SfLayout layout) {
  if (layout == SfLayout::col_major)
    return {DType::e4m3, {rows, groups}, {1, (rows + 15) / 16 * 16}};
  return {DType::e4m3, {rows, groups}, {groups, 1}};
}

} // namespace tilejit::quant
