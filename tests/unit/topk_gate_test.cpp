// topk_gate_test.cpp - The argument checks of topk_gate, which reject before
// anything runs or is written (no GPU needed).
#include "moe/topk_gate.h"

#include "tilejit/error.h"

#include <catch2/catch.hpp>

using namespace tilejit;
using rt::TensorView;

namespace {
std::string user_error(const TensorView &scores, int64_t k,
                       const TensorView &idx) {
  try {
    moe::topk_gate(scores, k, idx);
  } catch (const UserError &e) {
    return e.what();
  }
  return "";
}
} // namespace

TEST_CASE("topk_gate rejects bad arguments", "[kernels][error]") {
  CUdeviceptr p = 0x100000;
  auto scores = TensorView::contiguous(p, DType::f32, {10, 72});
  auto idx = TensorView::contiguous(p, DType::i64, {10, 6});
  // Deliberate mistake: bf16 scores.
  CHECK(user_error(TensorView::contiguous(p, DType::bf16, {10, 72}), 6, idx) ==
        "topk_gate: argument 'scores' has dtype bf16; requires f32");
  // Deliberate mistake: more picks than experts.
  CHECK(
      user_error(scores, 73, TensorView::contiguous(p, DType::i64, {10, 73})) ==
      "topk_gate: argument 'num_topk' is 73; requires 1 <= num_topk <= 72 "
      "(the experts)");
  // Deliberate mistake: too many experts for one warp's registers.
  CHECK(user_error(TensorView::contiguous(p, DType::f32, {10, 2000}), 6, idx) ==
        "topk_gate: argument 'scores' has 2000 experts (columns); requires 1 "
        "to 1024");
  // Deliberate mistake: i32 indices.
  CHECK(user_error(scores, 6, TensorView::contiguous(p, DType::i32, {10, 6})) ==
        "topk_gate: argument 'topk_idx' is i32[10, 6] strides [6, 1]; requires "
        "a contiguous i64 [10, 6]");
  // No tokens: nothing to do, no GPU needed.
  CHECK(user_error(TensorView::contiguous(0, DType::f32, {0, 72}), 6,
                   TensorView::contiguous(0, DType::i64, {0, 6})) == "");
}
