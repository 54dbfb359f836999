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
