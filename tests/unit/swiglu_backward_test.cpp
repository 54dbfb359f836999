// swiglu_backward_test.cpp - swiglu_backward_and_per_token_cast's host entry
// refuses a clamp that is not positive (its case table holds the op's other
// mistakes); its kernel keeps a row's scales and weight in registers (one
// barrier: the row's sum across warps), scatters the row's sum and zeroes
// weight_grad with predicated stores; the harness fills token_topk_to_pos
// as the inverse of pos_to_token_topk. 2.1's plain swiglu_backward: its
// entry's messages, and its padding mask leaves the vectors as they are.
#include "op_test.h"
#include "quant/swiglu_backward.h"
#include "quant/swiglu_backward_and_per_token_cast.h"
#include "run.h"

#include "tilejit/compiler/compile.h"
#include "tilejit/error.h"

#include <catch2/catch.hpp>

using namespace tilejit;

namespace {

/// How many times `s` occurs in `ptx`.
size_t occurrences(const std::string &ptx, std::string_view s) {
  size_t n = 0;
  for (size_t at = ptx.find(s); at != std::string::npos;
       at = ptx.find(s, at + 1))
    ++n;
  return n;
}

} // namespace

TEST_CASE("swiglu_backward_and_per_token_cast refuses a clamp that is not "
          "positive",
          "[kernels][error]") {
  auto f = [](DType d, std::vector<int64_t> shape, CUdeviceptr at) {
    return harness::fake(d, std::move(shape), {}, at);
  };
  std::string message;
  try {
    quant::swiglu_backward_and_per_token_cast(
        f(DType::e4m3, {8, 512}, 0x10000), f(DType::f32, {8, 4}, 0x20000),
        f(DType::bf16, {8, 256}, 0x30000), f(DType::f32, {8, 2}, 0x40000),
        f(DType::i32, {8}, 0x50000), f(DType::i32, {8, 2}, 0x60000),
        f(DType::bf16, {8, 256}, 0x70000), f(DType::e4m3, {8, 512}, 0x80000),
        f(DType::f32, {8, 4}, 0x90000), f(DType::bf16, {8, 512}, 0xa0000),
        f(DType::f32, {8, 2}, 0xb0000), 128, false, 0.0f);
  } catch (const UserError &e) {
    message = e.what();
  }
  CHECK(message == "swiglu_backward_and_per_token_cast: argument "
                   "'swiglu_clamp_value' is 0; requires a positive value or "
                   "None");
}

TEST_CASE("swiglu_backward_and_per_token_cast keeps per-thread values in "
          "registers and scatters the row sums",
          "[kernels][compiler]") {
  quant::SwigluBackwardCastSpec spec;
  spec.clamp = 1;
  spec.round_sf = 1;
  spec.aligned = 1;
  const CompiledKernel c =
      compile(quant::swiglu_backward_and_per_token_cast_kernel(spec));
  auto count = [&](std::string_view s) { return occurrences(c.ptx, s); };
  // The row's sum across two warps; the scales and the weight, one a
  // thread, reach their vectors in registers.
  CHECK(count("bar.sync") == 1);
  // Vectors of 8: gate, up (8 bytes), grad_out (16) in; out, x_grad's
  // halves (16), x_grad_fp8's halves (8) out.
  CHECK(count("ld.global.v4") == 3);
  CHECK(count("st.global.v4") == 5);
  // The row's sum goes where pos_to_token_topk says; the zeroing is one
  // predicated scalar store a thread.
  CHECK(count("ld.global.s32") == 2);
  CHECK(count("div.rn.f32") >= 2); // g / t and 1 / t
  CHECK(count("ex2.approx") >= 1);
}

TEST_CASE("the harness fills token_topk_to_pos as pos_to_token_topk's "
          "inverse",
          "[kernels]") {
  const ops::OpDef &op = *ops::find_op("swiglu_backward_and_per_token_cast");
  const harness::Case c{.label = "", .shape = {37, 512, 18, 4}};
  const harness::Prepared p =
      harness::Prepared::make(harness::resolve(op, c), 7);
  const ops::HostCall &call = p.data().call;
  const auto &pos = call.tensor("pos_to_token_topk");
  const auto &to_pos = call.tensor("token_topk_to_pos");
  const int32_t *a = pos.data<int32_t>(), *b = to_pos.data<int32_t>();
  size_t rows = 0, none = 0, bad = 0;
  for (int64_t e = 0; e < 37; ++e)
    if (a[e] >= 0) {
      ++rows;
      bad += b[a[e]] != e;
    }
  for (int64_t i = 0; i < 18 * 4; ++i) {
    if (b[i] < 0)
      ++none;
    else
      bad += a[b[i]] != i;
  }
  CHECK(bad == 0);
  CHECK(rows > 0);
  CHECK(none > 0);
  CHECK(p.data().expected.size() == 5); // the reference ran
}

TEST_CASE("swiglu_backward refuses a clamp that is not positive and a zero "
          "factor",
          "[kernels][error]") {
  auto f = [](DType d, std::vector<int64_t> shape, CUdeviceptr at) {
    return harness::fake(d, std::move(shape), {}, at);
  };
  const auto none = ops::absent();
  auto message = [&](std::optional<float> rsf, std::optional<float> clamp) {
    try {
      quant::swiglu_backward(
          f(DType::bf16, {8, 256}, 0x10000), f(DType::bf16, {8, 128}, 0x20000),
          none, f(DType::f32, {8}, 0x30000), f(DType::bf16, {8, 256}, 0x40000),
          f(DType::f32, {8}, 0x50000), none, rsf, clamp);
    } catch (const UserError &e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message(std::nullopt, -1.0f) ==
        "swiglu_backward: argument 'clamp_value' is -1; requires a positive "
        "value or None");
  CHECK(message(0.0f, std::nullopt) ==
        "swiglu_backward: argument 'routed_scaling_factor' is 0; requires a "
        "nonzero value or None");
}

TEST_CASE("swiglu_backward's padding mask keeps the kernel's vectors",
          "[kernels][compiler]") {
  // Every option: the row's padding flag (a maximum over the experts, in a
  // layout of one element a thread) masks fragments loaded in vectors of
  // 8; it is broadcast again in their layout, not converted, so every
  // access of a row stays a vector.
  quant::SwigluBackwardSpec spec;
  spec.psum = 1;
  spec.experts = 64; // one (row, expert) pair a thread
  spec.weights = 1;
  spec.clamp = 1;
  spec.recompute = 1;
  spec.vector_bytes = 16;
  const CompiledKernel c = compile(quant::swiglu_backward_kernel(spec));
  auto count = [&](std::string_view s) { return occurrences(c.ptx, s); };
  // l, r and act_x_grad in; x_grad's halves and act_out out.
  CHECK(count("ld.global.v4") == 3);
  CHECK(count("st.global.v4") == 3);
  // weight_grad: one scalar store.
  CHECK(count("st.global.b32") == 1);
  // Across the two warps: the padding flag, the weight, the row's sum.
  CHECK(count("bar.sync") == 3);
  CHECK(count("rcp.rn.f32") >= 1); // s = 1 / den
}
