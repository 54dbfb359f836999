// swiglu_forward_test.cpp - swiglu_forward_and_per_token_cast's host entry
// refuses a clamp or an absmax clamp that is not positive (its case table
// holds the op's other mistakes), its kernel counts with 64-bit atomics and
// divides by IEEE division, and the references' CUDA expf hook records and
// replays values bit for bit.
#include "common/cuda_math.h"
#include "op_test.h"
#include "quant/swiglu_forward_and_per_token_cast.h"

#include "tilejit/compiler/compile.h"
#include "tilejit/error.h"

#include <catch2/catch.hpp>

#include <bit>
#include <cmath>

using namespace tilejit;

namespace {

std::string entry_error(std::optional<float> clamp,
                        std::optional<float> clamp_min) {
  try {
    quant::swiglu_forward_and_per_token_cast(
        harness::fake(DType::bf16, {8, 2048}), 128, ops::absent(),
        ops::absent(), ops::absent(),
        harness::fake(DType::e4m3, {8, 1024}, {}, 0x20000),
        harness::fake(DType::f32, {8, 8}, {}, 0x30000), ops::absent(), false,
        false, false, clamp, clamp_min);
  } catch (const UserError &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("swiglu_forward_and_per_token_cast refuses a clamp that is not "
          "positive",
          "[kernels][error]") {
  CHECK(entry_error(-1.0f, std::nullopt) ==
        "swiglu_forward_and_per_token_cast: argument 'swiglu_clamp_value' is "
        "-1; requires a positive value or None");
  CHECK(entry_error(0.0f, std::nullopt) ==
        "swiglu_forward_and_per_token_cast: argument 'swiglu_clamp_value' is "
        "0; requires a positive value or None");
  CHECK(entry_error(std::nullopt, 0.0f) ==
        "swiglu_forward_and_per_token_cast: argument 'sf_clamp_min' is 0; "
        "requires a positive value or None");
}

TEST_CASE("swiglu_forward_and_per_token_cast counts with 64-bit atomics and "
          "divides exactly",
          "[kernels][compiler]") {
  quant::SwigluForwardCastSpec spec;
  spec.block_m = 1;
  spec.block_k = 2048;
  spec.inside = 1;
  spec.vector_bytes = 16;
  spec.clamp = spec.count = spec.pos_to_expert = 1;
  const CompiledKernel compiled =
      compile(quant::swiglu_forward_and_per_token_cast_kernel(spec));
  CHECK(compiled.ptx.find("atom.global.add.u64") != std::string::npos);
  CHECK(compiled.ptx.find("div.rn.f32") != std::string::npos);
  CHECK(compiled.ptx.find("ex2.approx.ftz.f32") != std::string::npos);
  CHECK(compiled.ptx.find("ld.global.v4") != std::string::npos);
}

TEST_CASE("cuda_expf records its arguments and replays installed values",
          "[reference]") {
  const float bf16_arg = -1.0f, f32_arg = 0.3f;
  std::vector<float> args;
  {
    ref::ExpfRecorder recorder;
    CHECK(ref::cuda_expf(bf16_arg) == std::exp(bf16_arg));
    (void)ref::cuda_expf(f32_arg);
    (void)ref::cuda_expf(bf16_arg);
    args = recorder.arguments();
  }
  REQUIRE(args.size() == 2);
  // Values one ulp off glibc's, as CUDA's may be: returned bit for bit.
  std::vector<float> values;
  for (float a : args)
    values.push_back(
        std::bit_cast<float>(std::bit_cast<uint32_t>(std::exp(a)) + 1));
  ref::ExpfValues installed(args, values);
  for (size_t i = 0; i < args.size(); ++i)
    CHECK(std::bit_cast<uint32_t>(ref::cuda_expf(args[i])) ==
          std::bit_cast<uint32_t>(values[i]));
  CHECK(installed.misses() == 0);
  CHECK(ref::cuda_expf(2.5f) == std::exp(2.5f)); // not installed: glibc's
  CHECK(installed.misses() == 1);
}

TEST_CASE("cuda_log1pf is within 2 ulp of log1p and keeps its special values",
          "[reference]") {
  // The GPU test (math_cuda_gpu_test.cpp) proves it equal to k.log1p; here
  // it is checked against double precision on a sweep of bit patterns.
  auto ulps = [](float a, double exact) {
    const float r = static_cast<float>(exact);
    return std::abs(static_cast<double>(a) - exact) /
           (std::nextafter(std::fabs(r), INFINITY) - std::fabs(r));
  };
  double worst = 0;
  int64_t checked = 0;
  for (uint64_t b = 0; b < (1ull << 32); b += 65521) {
    const float x = std::bit_cast<float>(static_cast<uint32_t>(b));
    if (!std::isfinite(x) || x <= -1.0f || std::fabs(x) < 1e-30f)
      continue;
    worst = std::max(
        worst, ulps(ref::cuda_log1pf(x), std::log1p(static_cast<double>(x))));
    ++checked;
  }
  CHECK(checked > 30000);
  CHECK(worst <= 2.0);
  CHECK(std::signbit(ref::cuda_log1pf(-0.0f)));
  CHECK(ref::cuda_log1pf(-0.0f) == 0.0f);
  CHECK(ref::cuda_log1pf(0.0f) == 0.0f);
  CHECK(ref::cuda_log1pf(-1.0f) == -INFINITY);
  CHECK(std::isnan(ref::cuda_log1pf(-1.5f)));
  CHECK(std::isnan(ref::cuda_log1pf(NAN)));
  CHECK(ref::cuda_log1pf(INFINITY) == INFINITY);
  CHECK(std::isnan(ref::cuda_log1pf(-INFINITY)));
  // Tiny arguments: log1p(x) = x to the last bit.
  CHECK(ref::cuda_log1pf(1e-30f) == 1e-30f);
  CHECK(ref::cuda_log1pf(-1e-30f) == -1e-30f);
}
