// reference.h - CPU references of TileKernels 2.1's transform module
// (shared/specs/tk21_ops.md §7): apply_rotary.
#pragma once

#include "common/host_tensor.h"

#include <cstdint>
#include <optional>

namespace tilejit::transform {

/// Rotary position embedding, in place: for each token t (of batch b) at
/// position p = int32(seqlen_offset + positions[b, t], or + t), each pair i
/// of every head of `query` (and of `key`) is rotated by c = cache[p, i], s =
/// cache[p, R/2 + i]: the pair (x[i], x[i + R/2]), or (x[2i], x[2i + 1])
/// when interleaved; a' = fmaf(a, c, -(b s)), b' = fmaf(a, s, b c) (conjugate:
/// fmaf(a, c, b s), fmaf(a, -s, b c)) in f32, rounded to x's dtype (RNE), as
/// TileKernels' kernel places its FMAs. query: bf16 or f32 (T, Hq, R) or (B,
/// T, Hq, R) with stride 1 along R and R 64 or 128; key: the same rank,
/// dtype, B and T, Hk heads; cos_sin_cache: f32 (L, R); positions: i32 or i64
/// (T,) or (B, T). A position outside [0, L) throws (the original reads out
/// of bounds). Throws UserError naming the argument, its value and the
/// requirement; nothing is changed then.
void apply_rotary_ref(
    const ref::HostTensor &query, const ref::HostTensor &cos_sin_cache,
    const std::optional<ref::HostTensor> &key = std::nullopt,
    const std::optional<ref::HostTensor> &positions = std::nullopt,
    bool interleaved = false, bool conjugate = false,
    int64_t seqlen_offset = 0);

} // namespace tilejit::transform
