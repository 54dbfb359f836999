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

} // namespace tilejit::ops
