// scale_layout.h - §3.3's three scale-factor layouts as the ops declare them
// (OpDef::shape_of): what a call's scale tensor is checked against and what
// the tests and the CLI allocate.
#pragma once

#include "op/op_def.h"
#include "quant/reference.h"

namespace tilejit::quant {

/// The layout the three flags ask for (packed wins, as in the original).
inline SfLayout sf_layout(bool col_major, bool packed) {
  return packed      ? SfLayout::packed_ue8m0
         : col_major ? SfLayout::col_major
                     : SfLayout::row_major;
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

} // namespace tilejit::quant
