// scale_copy_test.cpp - scale_copy's CPU reference: strides and IEEE
// specials. The op's argument checks are in its case table.
#include "elementwise/reference.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

using namespace tilejit;

TEST_CASE("scale_copy_ref follows both tensors' strides", "[kernels]") {
  // x is 2x3 with a row stride of 4 (one padding column); out is transposed
  // in memory (column-major).
  std::vector<float> x = {1, 2, 3, -1, 4, 5, 6, -1};
  std::vector<float> out(6, 0.0f);
  const int64_t xs[2] = {4, 1}, os[2] = {1, 2};
  elementwise::scale_copy_ref(x.data(), xs, out.data(), os, 2, 3, 0.5f);
  CHECK(out == std::vector<float>{0.5f, 2.0f, 1.0f, 2.5f, 1.5f, 3.0f});
}

TEST_CASE("scale_copy_ref keeps IEEE specials", "[kernels]") {
  float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {inf, -0.0f, std::nanf(""), 1e-45f};
  std::vector<float> out(4);
  const int64_t s[2] = {4, 1};
  elementwise::scale_copy_ref(x.data(), s, out.data(), s, 1, 4, 2.0f);
  CHECK(out[0] == inf);
  CHECK(std::signbit(out[1]));
  CHECK(std::isnan(out[2]));
  CHECK(out[3] == 2.8e-45f);
}
