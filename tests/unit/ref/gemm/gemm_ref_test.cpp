// gemm_ref_test.cpp - Tests of the gemm reference: a product worked by hand,
// the output rounding of each dtype, and the argument checks.
#include "gemm/reference.h"

#include "common/convert.h"

#include "tilejit/error.h"

#include <catch2/catch.hpp>

using namespace tilejit;
using tilejit::ref::HostTensor;

namespace {
HostTensor bf16(std::initializer_list<int64_t> shape,
                std::initializer_list<float> values) {
  HostTensor t = HostTensor::zeros(DType::bf16, shape);
  int64_t i = 0;
  for (float v : values)
    t.data<uint16_t>()[i++] = ref::f32_to_bf16(v);
  return t;
}
} // namespace

TEST_CASE("gemm_ref computes a * b^T", "[ref][gemm]") {
  // a = [[1, 2, 3], [4, 5, 6]], b = [[1, 0, -1], [0.5, 0.5, 0.5]]
  HostTensor a = bf16({2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor b = bf16({2, 3}, {1, 0, -1, 0.5f, 0.5f, 0.5f});
  HostTensor c = gemm::gemm_ref(a, b, DType::f32);
  CHECK(c.at<float>({0, 0}) == -2.0f);
  CHECK(c.at<float>({0, 1}) == 3.0f);
  CHECK(c.at<float>({1, 0}) == -2.0f);
  CHECK(c.at<float>({1, 1}) == 7.5f);
  CHECK(gemm::gemm_ref_row(a, b, 1) == std::vector<double>{-2.0, 7.5});
}

TEST_CASE("gemm_ref rounds once to the output dtype", "[ref][gemm]") {
  // 1 + 2^-9 is exact in f32 and rounds to 1 in bf16 (8 bits of mantissa).
  HostTensor a = bf16({1, 2}, {1.0f, 0.00390625f});
  HostTensor b = bf16({1, 2}, {1.0f, 0.5f});
  CHECK(gemm::gemm_ref(a, b, DType::f32).at<float>({0, 0}) == 1.001953125f);
  CHECK(gemm::gemm_ref(a, b, DType::bf16).at<uint16_t>({0, 0}) ==
        ref::f32_to_bf16(1.0f));
}

TEST_CASE("gemm_ref rejects operands that do not multiply", "[ref][gemm]") {
  HostTensor a = bf16({2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor b = bf16({2, 2}, {1, 2, 3, 4});
  // Deliberate mistake: K differs.
  CHECK_THROWS_WITH(gemm::gemm_ref(a, b, DType::f32),
                    "gemm_ref: A bf16[2, 3] strides [3, 1] and B bf16[2, 2] "
                    "strides [2, 1] must be bf16, f16, f32, e4m3 or e5m2 (M, "
                    "K) and (N, K) of one dtype");
}
