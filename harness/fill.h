// fill.h - The inputs a case table's fills make (Fill, op_test.h): random
// values, bytes, index tensors of every kind, the inverse of an index
// tensor. Internal to the harness (run.cpp).
#pragma once

#include "op_test.h"

#include "common/host_tensor.h"

#include <cstdint>
#include <random>

namespace tilejit::harness {

/// Fills `elements` of `t` as `f` says; `rows_of`: the rows (or elements)
/// an index fill indexes, or the bound of ids_below.
void fill(ref::HostTensor &t, int64_t elements, const Fill &f,
          std::mt19937_64 &gen, int64_t rows_of = 0);

/// -1 everywhere in `t` (contiguous, i32 or i64), then e at every flat
/// index index[e] >= 0 inside `t`.
void inverse_fill(ref::HostTensor &t, const ref::HostTensor &index);

} // namespace tilejit::harness
