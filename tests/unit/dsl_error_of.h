// dsl_error_of.h - What the DSL message tests share: the UserError text of
// a kernel built with one deliberate mistake.
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

} // namespace tilejit
