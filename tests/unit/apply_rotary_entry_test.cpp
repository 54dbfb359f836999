// apply_rotary_entry_test.cpp - apply_rotary's C++ entry (TileKernels'
// form: query and key in place) refuses mistakes before any launch, the
// key's included when the query is fine (no GPU needed: nothing launches).
#include "transform/apply_rotary.h"

#include "op_test.h"

#include "tilejit/error.h"

#include <catch2/catch.hpp>

using namespace tilejit;
using harness::fake;

TEST_CASE("apply_rotary's entry refuses mistakes before any launch",
          "[transform]") {
  const rt::TensorView query = fake(DType::bf16, {8, 4, 64}),
                       cache = fake(DType::f32, {64, 64}, {}, 0x200000);
  // Deliberate mistake: a key of other tokens.
  CHECK_THROWS_WITH(
      transform::apply_rotary(query, cache,
                              fake(DType::bf16, {9, 2, 64}, {}, 0x300000),
                              ops::absent()),
      "apply_rotary: argument 'key' is bf16[9, 2, 64] strides [128, 64, 1]; "
      "requires query's dtype bf16, rank 3 and tokens (its dimensions before "
      "the last two)");
  // Deliberate mistake: a key of other columns than the cache's, refused
  // before the (valid) query is rotated.
  CHECK_THROWS_WITH(
      transform::apply_rotary(query, cache,
                              fake(DType::bf16, {8, 2, 128}, {}, 0x300000),
                              ops::absent()),
      "apply_rotary: argument 'cos_sin_cache' has shape [64, 64]; requires "
      "[L, R] = [64, 128]");
  // Deliberate mistake: positions of other tokens (the query's call).
  CHECK_THROWS_WITH(
      transform::apply_rotary(query, cache, ops::absent(),
                              fake(DType::i32, {7}, {}, 0x400000)),
      "apply_rotary: argument 'positions' has shape [7]; requires [...] = "
      "[8]");
}
