// op.h - What an op's declaration file includes: the declaration types,
// make_op and its kernel table, the argument checks, the error types and
// fmt for the messages an op's own checks write.
#pragma once

#include "common/check.h"
#include "op/typed_op.h"

#include "tilejit/error.h"

#include <fmt/format.h>

#include <initializer_list>
#include <string_view>

namespace tilejit::ops {

/// `bytes` when every named tensor of the call has rows aligned to `bytes`
/// (rows_aligned: the promise of dsl::vectors_of; an absent optional tensor
/// has none to break it), else 0: a spec's vector_bytes.
inline int32_t vector_bytes(const Call &c,
                            std::initializer_list<std::string_view> tensors,
                            int bytes = 16) {
  for (std::string_view t : tensors)
    if (c.has(t) && !rows_aligned(c.tensor(t), bytes))
      return 0;
  return bytes;
}

/// The largest divisor of `n` from 1 to `most`: how many rows of a sum in
/// order a step loads at once (n = 0: 1).
inline int32_t unroll_dividing(int64_t n, int32_t most = 12) {
  for (int32_t u = n > 0 ? most : 1; u > 1; --u)
    if (n % u == 0)
      return u;
  return 1;
}

} // namespace tilejit::ops
