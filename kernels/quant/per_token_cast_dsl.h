// per_token_cast_dsl.h - per_token_cast's box tiling as a kernel body that
// fused ops share: the same tiles, scales and stores over rows the op
// computes itself (SwiGLU's activation) instead of loading x.
#pragma once

#include "quant/per_token_cast.h"

#include "tilejit/compiler/dsl.h"

#include <functional>
#include <optional>

namespace tilejit::quant {

/// What a per-token cast quantizes: `extent`, a kernel tensor (M, K) whose
/// sizes set the grid and the bounds of the stores (x, or a view of it), and
/// `tile`, the f32 rows x cols box at (r0, c0) of the rows to quantize
/// (zeros outside (M, K) unless the bounds promise it is inside).
struct CastSource {
  dsl::Tensor extent;
  std::function<dsl::Value(dsl::Value r0, dsl::Value c0, int64_t rows,
                           int64_t cols, dsl::Bounds bounds)>
      tile;
  /// The absmax clamp when not the format's (§3.1: sf_clamp_min).
  std::optional<double> clamp_min = std::nullopt;
  /// Values a column of `extent` holds (2: packed e2m1 bytes).
  int64_t packing = 1;
};

/// per_token_cast's block_m x block_k boxes (spec.parts == 0) over `src`:
/// declares the grid and per_token_cast's outputs ("out", "out_sf", and
/// "sf" with given scales), quantizes each box in groups and stores data
/// and scales in the spec's layout.
void per_token_cast_boxes(dsl::KernelBuilder &k, const PerTokenCastSpec &s,
                          const CastSource &src);

} // namespace tilejit::quant
