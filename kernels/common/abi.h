// abi.h - Pack host values as the compiled kernels expect their parameters.
#pragma once

#include "tilejit/runtime/launch.h"
#include "tilejit/runtime/tensor.h"

namespace tilejit::ops {

/// A tensor parameter of rank r is 3 + 2r 64-bit words: allocated pointer,
/// aligned pointer, offset (0), sizes, strides in elements (see abi_words).
inline void push_tensor(rt::ArgPack &args, const rt::TensorView &t) {
  args.push(static_cast<uint64_t>(t.data));
  args.push(static_cast<uint64_t>(t.data));
  args.push(int64_t{0});
  for (int i = 0; i < t.rank; ++i)
    args.push(t.shape[i]);
  for (int i = 0; i < t.rank; ++i)
    args.push(t.strides[i]);
}

} // namespace tilejit::ops
