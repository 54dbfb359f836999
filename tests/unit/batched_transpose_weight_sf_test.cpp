// batched_transpose_weight_sf_test.cpp - the C++ entry's lists: their
// lengths, a 2-D weight taken as one group, and every weight checked
// before the first launch (the op's own checks are in its case table).
#include "op_test.h"
#include "quant/batched_transpose_weight_sf.h"

#include "tilejit/error.h"

#include <catch2/catch.hpp>

using namespace tilejit;
using harness::fake;

namespace {

std::string entry_error(
    const std::vector<rt::TensorView> &sfs, const std::vector<bool> &flags,
    const std::vector<std::pair<rt::TensorView, rt::TensorView>> &outs) {
  try {
    quant::batched_transpose_weight_sf(sfs, 128, flags, outs);
  } catch (const UserError &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("batched_transpose_weight_sf's entry checks its lists and every "
          "weight before launching",
          "[kernels][error]") {
  // A 2-D (3, 8) weight: sf0 (384, 2) strides (1, 384), sf1 (1024, 1).
  const auto sf = fake(DType::f32, {3, 8});
  const std::pair good{fake(DType::i32, {384, 2}, {1, 384}, 0x20000),
                       fake(DType::i32, {1024, 1}, {1, 1024}, 0x30000)};
  CHECK(entry_error({sf}, {false, true}, {good}) ==
        "batched_transpose_weight_sf: arguments 'sf', 'transpose_sf1s' and "
        "'outs' have 1, 2 and 1 entries; requires one each per weight");
  CHECK(entry_error({fake(DType::f32, {24})}, {false}, {good}) ==
        "batched_transpose_weight_sf: argument 'sf[0]' is f32[24] strides "
        "[1]; requires rank 2 or 3");
  // The second weight's sf1 is not (k, P1): refused before the first
  // weight's launch (which, without a GPU, would fail otherwise).
  const std::pair bad{good.first,
                      fake(DType::i32, {512, 1}, {1, 512}, 0x30000)};
  CHECK(entry_error({sf, sf}, {false, false}, {good, bad}) ==
        "batched_transpose_weight_sf: argument 'sf1' is i32[1, 512, 1] "
        "strides [512, 1, 512]; requires i32[1, 1024, 1] strides [>= 1024, "
        "1, >= 1024]");
}
