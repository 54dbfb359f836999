// apply_rotary_test.cpp - apply_rotary's reference (tk21_ops.md §7):
// hand-computed rotations of NeoX and GPT-J pairs, the conjugate undoing the
// rotation, positions and seqlen_offset, 4-D input with key, bf16 rounding,
// and every argument message.
#include "transform/reference.h"

#include "common/convert.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using tilejit::DType;
using tilejit::ref::HostTensor;
using tilejit::transform::apply_rotary_ref;

namespace {

template <class T>
HostTensor make(DType dtype, std::vector<int64_t> shape, std::vector<T> v) {
  return HostTensor::from<T>(dtype, shape, v);
}

HostTensor f32(std::vector<int64_t> shape, std::vector<float> v) {
  return make<float>(DType::f32, std::move(shape), std::move(v));
}

/// An (L, 64) cache: row p holds cos(p * w_i) then sin(p * w_i), w_i = 1 /
/// (i + 1).
HostTensor cache(int64_t rows) {
  std::vector<float> v;
  for (int64_t p = 0; p < rows; ++p) {
    for (int i = 0; i < 32; ++i)
      v.push_back(std::cos(static_cast<float>(p) / (i + 1)));
    for (int i = 0; i < 32; ++i)
      v.push_back(std::sin(static_cast<float>(p) / (i + 1)));
  }
  return f32({rows, 64}, v);
}

/// One token, one head of 64: x[j] = j + 1.
HostTensor ramp() {
  std::vector<float> v(64);
  for (int j = 0; j < 64; ++j)
    v[j] = static_cast<float>(j + 1);
  return f32({1, 1, 64}, v);
}

} // namespace

TEST_CASE("apply_rotary rotates NeoX and GPT-J pairs with the kernel's FMAs",
          "[ref][transform]") {
  const HostTensor c = cache(8);
  HostTensor q = ramp();
  apply_rotary_ref(q, c, std::nullopt, std::nullopt, false, false, 3);
  // NeoX: pair i = (x[i], x[i + 32]) at position 3.
  for (int i : {0, 5, 31}) {
    const float a = static_cast<float>(i + 1), b = static_cast<float>(i + 33);
    const float cs = c.at<float>({3, i}), sn = c.at<float>({3, 32 + i});
    CHECK(q.at<float>({0, 0, i}) == std::fma(a, cs, -(b * sn)));
    CHECK(q.at<float>({0, 0, i + 32}) == std::fma(a, sn, b * cs));
  }
  // GPT-J: pair i = (x[2i], x[2i + 1]); position 0 rotates by nothing.
  HostTensor g = ramp();
  apply_rotary_ref(g, c, std::nullopt, std::nullopt, true, false, 2);
  const float cs = c.at<float>({2, 4}), sn = c.at<float>({2, 36});
  CHECK(g.at<float>({0, 0, 8}) == std::fma(9.0f, cs, -(10.0f * sn)));
  CHECK(g.at<float>({0, 0, 9}) == std::fma(9.0f, sn, 10.0f * cs));
  HostTensor zero = ramp();
  apply_rotary_ref(zero, c, std::nullopt, std::nullopt, true);
  CHECK(zero.at<float>({0, 0, 9}) == 10.0f);
}

TEST_CASE("apply_rotary's conjugate turns the rotation back",
          "[ref][transform]") {
  const HostTensor c = cache(8);
  HostTensor q = ramp();
  apply_rotary_ref(q, c, std::nullopt, std::nullopt, false, false, 5);
  apply_rotary_ref(q, c, std::nullopt, std::nullopt, false, true, 5);
  for (int j = 0; j < 64; ++j)
    CHECK(q.at<float>({0, 0, j}) ==
          Approx(static_cast<float>(j + 1)).epsilon(1e-5));
}

TEST_CASE("apply_rotary takes positions per token, 4-D input and a key, and "
          "rounds bf16 once",
          "[ref][transform]") {
  const HostTensor c = cache(16);
  // (B, T, H, R) = (2, 2, 1, 64), key with 2 heads; positions (B, T).
  std::vector<float> v(256, 1.0f);
  HostTensor q = f32({2, 2, 1, 64}, v);
  HostTensor k = f32({2, 2, 2, 64}, std::vector<float>(512, 1.0f));
  HostTensor pos = make<int64_t>(DType::i64, {2, 2}, {0, 7, 3, 1});
  apply_rotary_ref(q, c, k, pos, false, false, 2);
  // Batch 1, token 0: position 2 + 3 = 5.
  const float cs = c.at<float>({5, 0}), sn = c.at<float>({5, 32});
  CHECK(q.at<float>({1, 0, 0, 0}) == std::fma(1.0f, cs, -(1.0f * sn)));
  CHECK(k.at<float>({1, 0, 1, 0}) == q.at<float>({1, 0, 0, 0}));
  // bf16: the f32 result rounded to nearest even.
  std::vector<uint16_t> bits(64, tilejit::ref::f32_to_bf16(1.5f));
  HostTensor b = make<uint16_t>(DType::bf16, {1, 1, 64}, bits);
  apply_rotary_ref(b, c, std::nullopt, std::nullopt, false, false, 1);
  const float c1 = c.at<float>({1, 0}), s1 = c.at<float>({1, 32});
  CHECK(b.at<uint16_t>({0, 0, 0}) ==
        tilejit::ref::f32_to_bf16(std::fma(1.5f, c1, -(1.5f * s1))));
}

TEST_CASE("apply_rotary names every bad argument", "[ref][transform]") {
  const HostTensor c = cache(4);
  HostTensor q = ramp();
  CHECK_THROWS_WITH(apply_rotary_ref(q, f32({4, 32}, std::vector<float>(128))),
                    "apply_rotary_ref: argument 'cos_sin_cache' has shape "
                    "[4, 32]; requires R = 64 or 128 columns (cos, then sin, "
                    "of R / 2 frequencies)");
  CHECK_THROWS_WITH(apply_rotary_ref(f32({1, 64}, std::vector<float>(64)), c),
                    "apply_rotary_ref: argument 'query' has shape [1, 64]; "
                    "requires (T, H, R) or (B, T, H, R)");
  CHECK_THROWS_WITH(
      apply_rotary_ref(f32({1, 1, 128}, std::vector<float>(128)), c),
      "apply_rotary_ref: argument 'query' has shape [1, 1, 128]; requires the "
      "last dimension R = 64 (the columns of 'cos_sin_cache')");
  CHECK_THROWS_WITH(
      apply_rotary_ref(q, c, f32({2, 1, 64}, std::vector<float>(128))),
      "apply_rotary_ref: argument 'key' is f32[2, 1, 64]; requires query's "
      "dtype f32, rank 3 and tokens [1]");
  CHECK_THROWS_WITH(
      apply_rotary_ref(q, c, std::nullopt,
                       make<int32_t>(DType::i32, {2}, {0, 1})),
      "apply_rotary_ref: argument 'positions' is i32[2]; requires i32 or i64 "
      "[1] (T)");
  CHECK_THROWS_WITH(
      apply_rotary_ref(q, c, std::nullopt, std::nullopt, false, false, 4),
      "apply_rotary_ref: token 0 of batch 0 is at position 4 (seqlen_offset 4 "
      "+ 0); requires a row of 'cos_sin_cache' in [0, 4)");
  // Nothing is changed when a check fails.
  CHECK(q.at<float>({0, 0, 0}) == 1.0f);
}
