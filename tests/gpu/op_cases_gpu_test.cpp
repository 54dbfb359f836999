// op_cases_gpu_test.cpp - Every op's GPU cases (kernels/<family>/<op>_test.cpp)
// on the GPU against its CPU reference; `[big]` runs TileKernels' full
// grids. Inputs are seeded anew each run: a failure prints the op's seed
// (TILEJIT_TEST_SEED=N runs the op's cases on those inputs again) and its
// case's (`tilejit run OP ... --seed N`, for a case the CLI can state).
// Also what a case table cannot say: gemm's two cubin makers, an op called
// in place. TILEJIT_TEST_DISTINCT_KERNELS=1 runs one case a distinct set of
// kernels, the smallest (tools/gpu/sanitize_ops.sh: racecheck and
// synccheck of the larger cases ran past any device call).
#include "kernel_cases.h"
#include "run.h"

#include "common/convert.h"
#include "elementwise/scale_copy.h"
#include "quant/per_token_cast_and_cast_back.h"

#include "tilejit/error.h"
#include "tilejit/runtime/buffer.h"
#include "tilejit/runtime/ptxas.h"
#include "tilejit/runtime/stream.h"

#include <catch2/catch.hpp>

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string_view>
#include <vector>

using namespace tilejit;

namespace {

/// Whether TILEJIT_TEST_SKIP_OPS (comma-separated op names) names `op`:
/// tools/gpu/run.sh leaves gemm out of synccheck, under which its WGMMA
/// kernel dies with a launch failure (rewritten in the pipelining issue).
bool skipped(const std::string &op) {
  const char *env = std::getenv("TILEJIT_TEST_SKIP_OPS");
  const std::string list = "," + std::string(env ? env : "") + ",";
  return list.find("," + op + ",") != std::string::npos;
}

/// The seed of an op's cases: TILEJIT_TEST_SEED's (a failure's, to run it
/// again), else a new one.
uint64_t op_seed() {
  const char *env = std::getenv("TILEJIT_TEST_SEED");
  if (!env || !*env)
    return std::random_device{}();
  const std::string_view text(env);
  uint64_t seed = 0;
  auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), seed);
  if (ec != std::errc() || end != text.data() + text.size())
    FAIL("TILEJIT_TEST_SEED is '" << text
                                  << "'; requires a non-negative integer");
  return seed;
}

/// Whether TILEJIT_TEST_DISTINCT_KERNELS asks for one case a distinct set
/// of kernels ("1"; unset, empty or "0": every case).
bool distinct_kernels() {
  const char *env = std::getenv("TILEJIT_TEST_DISTINCT_KERNELS");
  const std::string_view text(env ? env : "");
  if (text == "1")
    return true;
  if (!text.empty() && text != "0")
    FAIL("TILEJIT_TEST_DISTINCT_KERNELS is '" << text << "'; requires 0 or 1");
  return false;
}

void run_kind(int kind) {
  for (const harness::OpTest *t : harness::all_tests()) {
    const ops::OpDef &op = *ops::find_op(t->op);
    if (skipped(op.name)) {
      WARN(op.name << ": left out (TILEJIT_TEST_SKIP_OPS)");
      continue;
    }
    std::vector<harness::Case> cases;
    for (const harness::Case &c : t->cases)
      if ((c.kind & kind) &&
          (kind == harness::Case::big || !(c.kind & harness::Case::big)))
        cases.push_back(c);
    if (distinct_kernels()) {
      const size_t all = cases.size();
      cases = harness::one_case_per_kernels(op, cases);
      if (cases.size() < all)
        WARN(op.name << ": " << cases.size() << " of " << all
                     << " cases, one a distinct set of kernels "
                        "(TILEJIT_TEST_DISTINCT_KERNELS)");
    }
    harness::RunOptions options;
    options.seed = op_seed();
    harness::run_cases(
        op, cases, options,
        [&](const harness::Case &c, const harness::RunResult &r) {
          INFO(op.name << " " << r.shape << " (" << c.label
                       << "; TILEJIT_TEST_SEED=" << options.seed
                       << ", the case's inputs seed " << r.seed
                       << "): " << r.check);
          CHECK(r.passed);
        });
  }
}

} // namespace

TEST_CASE("every op matches its CPU reference on its GPU cases", "[ops]") {
  run_kind(harness::Case::gpu);
}

TEST_CASE("every op matches its CPU reference on TileKernels' grids",
          "[ops][big]") {
  run_kind(harness::Case::big);
}

TEST_CASE("a grid past the launch limits is a named error", "[ops][error]") {
  // 2^24 columns in tiles of 128: 131072 blocks along grid dimension 1.
  rt::DeviceBuffer x(4 << 24), out(4 << 24);
  auto vx = rt::TensorView::contiguous(x.ptr(), DType::f32, {1, 1 << 24});
  auto vo = rt::TensorView::contiguous(out.ptr(), DType::f32, {1, 1 << 24});
  std::string message;
  try {
    elementwise::scale_copy(vx, vo, 2.0f);
  } catch (const UserError &e) {
    message = e.what();
  }
  CHECK(message == "scale_copy: the tensors' sizes need more than 65535 "
                   "blocks along grid dimension 1 (ceil(x[1] / 128)); "
                   "requires fewer");
}

TEST_CASE("gemm is right with cubins from the driver's linker and ptxas",
          "[gemm]") {
  // Two makers, two keys, two compiles: the driver's linker (relocatable,
  // wgmma serialised) and, where there is one, ptxas (whole program).
  std::optional<std::string> ptxas = rt::find_ptxas();
  std::vector<std::string> makers = {"0"};
  if (ptxas)
    makers.push_back(*ptxas);
  harness::RunOptions options;
  options.seed = std::random_device{}();
  for (const std::string &maker : makers) {
    setenv("TILEJIT_PTXAS", maker.c_str(), 1);
    CHECK(rt::cubin_maker() == (maker == "0" ? "driver" : "ptxas"));
    harness::RunResult r = harness::run_case(
        *ops::find_op("gemm"), {.shape = {256, 512, 512}}, options);
    INFO("TILEJIT_PTXAS=" << maker << ", " << r.shape << ": " << r.check);
    CHECK(r.passed);
  }
  unsetenv("TILEJIT_PTXAS");
}

TEST_CASE("per_token_cast_and_cast_back writes over x as it writes out",
          "[ops]") {
  // TileKernels' op is in place: out = x must give what a separate out
  // gets, padded rows left as they were.
  const int64_t m = 37, k = 2560, ld = 4096;
  std::mt19937_64 gen(Catch::rngSeed());
  std::normal_distribution<float> normal(0.0f, 64.0f);
  std::vector<uint16_t> host(m * ld);
  for (uint16_t &v : host)
    v = ref::f32_to_bf16(normal(gen));
  rt::DeviceBuffer dx(host.size() * 2), dout(host.size() * 2);
  dx.upload(host.data(), host.size() * 2);
  const int64_t shape[2] = {m, k}, strides[2] = {ld, 1};
  auto vx = rt::TensorView::strided(dx.ptr(), DType::bf16, shape, strides);
  auto vo = rt::TensorView::strided(dout.ptr(), DType::bf16, shape, strides);
  quant::per_token_cast_and_cast_back(vx, vo, "e2m1", 32);
  quant::per_token_cast_and_cast_back(vx, vx, "e2m1", 32);
  rt::synchronize(nullptr);
  std::vector<uint16_t> in_place(host.size()), separate(host.size());
  dx.download(in_place.data(), in_place.size() * 2);
  dout.download(separate.data(), separate.size() * 2);
  size_t bad = 0, changed = 0;
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < ld; ++c) {
      const int64_t i = r * ld + c;
      if (c < k) {
        bad += in_place[i] != separate[i];
        changed += in_place[i] != host[i];
      } else {
        bad += in_place[i] != host[i];
      }
    }
  CHECK(bad == 0);
  CHECK(changed > 0);
}
