// reference.h - CPU references of the transpose family (transpose,
// batched_transpose; shared/specs/quant_transpose.md §14).
#pragma once

#include "common/host_tensor.h"

namespace tilejit::transpose {

/// out[b, y, x] = x[b, x, y], returned as a new contiguous (B, Y, X) tensor;
/// pure data movement, bit-exact for any dtype of 1, 2 or 4 bytes.
/// Requires a 3-D x with X % 64 == 0, Y % 64 == 0, stride[2] == 1,
/// stride[1] % 4 == 0 and (when B > 1) stride[0] == X * stride[1]; throws
/// UserError otherwise. Any dim of 0 gives an empty result.
///
///   HostTensor out = batched_transpose_ref(x); // x: bf16[8, 128, 64]
ref::HostTensor batched_transpose_ref(const ref::HostTensor &x);

/// The 2-D form: a (X, Y) x whose rows may be strided by any multiple of 4
/// elements; returns a contiguous (Y, X). Same requirements as above on the
/// two dims.
ref::HostTensor transpose_ref(const ref::HostTensor &x);

} // namespace tilejit::transpose
