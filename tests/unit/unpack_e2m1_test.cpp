// unpack_e2m1_test.cpp - unpack_from_e2m1fn_x2's C++ entry, which takes
// any rank: its shape check (before any launch; its case table covers the
// declared op).
#include "quant/unpack_e2m1.h"

#include "tilejit/error.h"

#include <catch2/catch.hpp>

using namespace tilejit;
using rt::TensorView;

TEST_CASE("unpack_from_e2m1fn_x2 of any rank checks out's shape first",
          "[kernels]") {
  const int64_t xs[3] = {2, 3, 4}, outs[3] = {2, 3, 4};
  const TensorView x = TensorView::contiguous(0x10000, DType::i8, xs);
  const TensorView out = TensorView::contiguous(0x20000, DType::f32, outs);
  std::string message;
  try {
    quant::unpack_from_e2m1fn_x2(x, out);
  } catch (const UserError &e) {
    message = e.what();
  }
  CHECK(message == "unpack_from_e2m1fn_x2: argument 'out' is " +
                       out.to_string() + "; requires the shape of x = " +
                       x.to_string() + " with the last dimension doubled");
}
