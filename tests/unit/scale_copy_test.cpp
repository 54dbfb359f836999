// scale_copy_test.cpp - scale_copy on the CPU: the reference, the argument
// checks of the host entry (each rejects before anything runs or is written),
// and the kernel of every registered op compiling to PTX.
#include "elementwise/scale_copy.h"
#include "registry.h"

#include "tilejit/compiler/compile.h"
#include "tilejit/error.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

using namespace tilejit;
using Catch::Matchers::Contains;
using rt::TensorView;

namespace {
std::string user_error(const TensorView &x, const TensorView &out) {
  try {
    elementwise::scale_copy(x, out, 2.0f);
  } catch (const UserError &e) {
    return e.what();
  }
  return "";
}
} // namespace

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

TEST_CASE("scale_copy rejects bad arguments before launching",
          "[kernels][error]") {
  CUdeviceptr p = 0x10000;
  auto x = TensorView::contiguous(p, DType::f32, {4, 8});
  auto out = TensorView::contiguous(p + 4096, DType::f32, {4, 8});

  // Deliberate mistake: bf16 input.
  CHECK(user_error(TensorView::contiguous(p, DType::bf16, {4, 8}), out) ==
        "scale_copy: argument 'x' has dtype bf16; requires f32");
  // Deliberate mistake: rank 3.
  CHECK(user_error(TensorView::contiguous(p, DType::f32, {2, 4, 8}),
                   TensorView::contiguous(p, DType::f32, {2, 4, 8})) ==
        "scale_copy: argument 'x' has shape [2, 4, 8] (rank 3); requires "
        "rank 2");
  // Deliberate mistake: out of another shape.
  CHECK(user_error(x, TensorView::contiguous(p, DType::f32, {8, 4})) ==
        "scale_copy: argument 'out' has shape [8, 4]; requires the shape of "
        "'x', [4, 8]");
  // Deliberate mistake: null pointer.
  CHECK(user_error(TensorView::contiguous(0, DType::f32, {4, 8}), out) ==
        "scale_copy: argument 'x' is a null pointer with shape [4, 8]; "
        "requires device memory");
  // Deliberate mistake: misaligned output.
  CHECK(user_error(x, TensorView::contiguous(p + 2, DType::f32, {4, 8})) ==
        "scale_copy: argument 'out' has address 0x10002; requires 4-byte "
        "alignment");
  // Deliberate mistake: negative stride.
  const int64_t shape[2] = {4, 8}, strides[2] = {-8, 1};
  CHECK(user_error(TensorView::strided(p, DType::f32, shape, strides), out) ==
        "scale_copy: argument 'x' has stride[0] = -8; requires a non-negative "
        "stride");
  // Deliberate mistake: more columns than the grid can cover.
  CHECK_THAT(
      user_error(TensorView::contiguous(p, DType::f32, {1, int64_t{1} << 24}),
                 TensorView::contiguous(p, DType::f32, {1, int64_t{1} << 24})),
      Contains("requires at most 68719476704 rows and 8388480 columns"));
}

TEST_CASE("scale_copy of an empty tensor needs neither pointers nor a GPU",
          "[kernels]") {
  auto x = TensorView::contiguous(0, DType::f32, {0, 8});
  CHECK_NOTHROW(elementwise::scale_copy(x, x, 2.0f));
}

TEST_CASE("every registered op compiles to PTX for sm_90a", "[kernels]") {
  for (const ops::OpInfo &op : ops::all_ops()) {
    INFO(op.name);
    ops::OpArgs args;
    args.shape = op.default_shape;
    CompiledKernel c = compile(op.kernel(args));
    CHECK_THAT(c.ptx, Contains(".target sm_90a") &&
                          Contains(".entry " + std::string(op.name)));
  }
}

TEST_CASE("scale_copy's spec is a complete bytewise key", "[kernels]") {
  // The op's kernel table compares specs bytewise: no padding may hide a
  // field, and every field must reach the specialisation key.
  STATIC_REQUIRE(
      std::has_unique_object_representations_v<elementwise::ScaleCopySpec>);
  elementwise::ScaleCopySpec a, b;
  b.vector_bytes = 16;
  CHECK(elementwise::scale_copy_key(a).digest() !=
        elementwise::scale_copy_key(b).digest());
  CHECK(elementwise::scale_copy_key(b).get("vector_bytes") == "16");
}
