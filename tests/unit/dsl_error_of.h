// dsl_error_of.h - What the DSL message tests share: the UserError text of
// a kernel built with one deliberate mistake, and the tile they misuse.
#pragma once

#include "tilejit/compiler/dsl.h"
#include "tilejit/error.h"

#include <functional>
#include <string>

namespace tilejit {

/// Builds a kernel of 128 threads with an f32 rank-2 tensor "x" and `body`
/// and returns the UserError text ("" if none).
inline std::string
error_of(const std::function<void(dsl::KernelBuilder &, dsl::Tensor &)> &body) {
  try {
    dsl::KernelBuilder k("bad", 128);
    auto x = k.tensor("x", DType::f32, 2);
    body(k, x);
    k.build();
  } catch (const UserError &e) {
    return e.what();
  }
  return "";
}

/// The (4, 32) tile at the origin of `x`: the value most message tests
/// misuse.
inline dsl::Value tile(dsl::KernelBuilder &k, dsl::Tensor &x) {
  return k.load(x, {k.index(0), k.index(0)}, {4, 32});
}

} // namespace tilejit
