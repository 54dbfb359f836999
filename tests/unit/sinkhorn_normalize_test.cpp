// sinkhorn_normalize_test.cpp - The argument checks of sinkhorn_normalize,
// which reject before anything runs or is written (no GPU needed).
#include "mhc/sinkhorn_normalize.h"

#include "tilejit/error.h"

#include <catch2/catch.hpp>

using namespace tilejit;
using rt::TensorView;

namespace {
std::string user_error(const TensorView &x, const TensorView &out,
                       int repeat = 10, float eps = 1e-6f) {
  try {
    mhc::sinkhorn_normalize(x, out, repeat, eps);
  } catch (const UserError &e) {
    return e.what();
  }
  return "";
}
} // namespace

TEST_CASE("sinkhorn_normalize rejects bad arguments", "[kernels][error]") {
  CUdeviceptr p = 0x100000;
  auto x = TensorView::contiguous(p, DType::f32, {8, 4, 4});
  // Deliberate mistake: matrices that are not square.
  CHECK(user_error(TensorView::contiguous(p, DType::f32, {8, 4, 5}), x) ==
        "sinkhorn_normalize: argument 'x' is f32[8, 4, 5] strides [20, 5, 1]; "
        "requires (..., n, n)");
  // Deliberate mistake: n not a power of two.
  auto x3 = TensorView::contiguous(p, DType::f32, {8, 3, 3});
  CHECK(user_error(x3, x3) == "sinkhorn_normalize: argument 'x' has 3 x 3 "
                              "matrices; requires n a power of two up to 32");
  // Deliberate mistake: no iterations.
  CHECK(user_error(x, x, 0) ==
        "sinkhorn_normalize: argument 'repeat' is 0; requires 1 to 100");
  // Deliberate mistake: a negative eps.
  CHECK(user_error(x, x, 10, -1.0f) == "sinkhorn_normalize: argument 'eps' is "
                                       "-1; requires a finite eps >= 0");
  // Deliberate mistake: out of another shape.
  CHECK_THAT(user_error(x, TensorView::contiguous(p, DType::f32, {4, 4, 4})),
             Catch::Matchers::StartsWith("sinkhorn_normalize: argument 'out'"));
  // No matrices: nothing to do, no GPU needed.
  auto empty = TensorView::contiguous(0, DType::f32, {0, 4, 4});
  CHECK(user_error(empty, empty) == "");
}
