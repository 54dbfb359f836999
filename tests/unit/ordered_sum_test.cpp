// ordered_sum_test.cpp - ordered_sums (kernels/common/ordered_sum.h) in the
// tile IR it builds: loops of unroll, unroll / 2, ..., 1 terms a step, each
// step's terms all loaded before the first of them is added, then added in
// term order, each add on the one before. (That the GPU's sums equal the
// sequential loop's bit for bit is engram_sinkhorn_step_reduce's case
// table, compared exactly at P = 1, 7, 64, 127 and 396.)
#include "common/ordered_sum.h"
#include "tilejit/compiler/compile.h"

#include <catch2/catch.hpp>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

using namespace tilejit;

namespace {

/// out[0, :] = the sum over the rows of p, in order, `unroll` rows a step,
/// a column a thread.
Kernel ordered_kernel(int64_t unroll) {
  dsl::KernelBuilder k("ordered", 32);
  auto p = k.tensor("p", DType::f32, 2);
  auto out = k.tensor("out", DType::f32, 2);
  k.grid({k.blocks(p, 1, 32)});
  auto n0 = k.block_id(0) * k.index(32);
  auto sums = ordered_sums(k, k.dim(p, 0), unroll,
                           {k.full({1, 32}, 0, DType::f32)}, [&](dsl::Value i) {
                             return std::vector{k.load(p, {i, n0}, {1, 32})};
                           });
  k.store(sums[0], out, {k.index(0), n0});
  return k.build();
}

/// A loop body's loads and adds, in the order the IR has them: for each
/// tile.load its result, for each arith.addf its two operands and result.
struct Body {
  std::vector<std::string> loads;
  std::vector<std::array<std::string, 3>> adds; ///< lhs, rhs, result
  bool loads_first = true;                      ///< no load after the first add
};

/// The bodies of the scf.for loops of `ir`, in order.
std::vector<Body> loop_bodies(const std::string &ir) {
  static const std::regex load(R"((%\w+) = tile\.load )");
  static const std::regex add(R"((%\w+) = arith\.addf (%\w+), (%\w+))");
  std::vector<Body> bodies;
  std::istringstream in(ir);
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (line.find("scf.for") != std::string::npos) {
      bodies.emplace_back();
      inside = true;
    } else if (line.find("scf.yield") != std::string::npos) {
      inside = false;
    } else if (inside && std::regex_search(line, m, load)) {
      bodies.back().loads_first &= bodies.back().adds.empty();
      bodies.back().loads.push_back(m[1]);
    } else if (inside && std::regex_search(line, m, add)) {
      bodies.back().adds.push_back({m[2], m[3], m[1]});
    }
  }
  return bodies;
}

} // namespace

TEST_CASE("ordered_sums loads a step's terms, then adds them in order",
          "[compiler]") {
  const Kernel kernel = ordered_kernel(8);
  const std::vector<Body> bodies = loop_bodies(kernel.tile_ir());
  REQUIRE(bodies.size() == 4);
  const size_t widths[] = {8, 4, 2, 1};
  for (size_t l = 0; l < bodies.size(); ++l) {
    INFO("loop " << l << "\n" << kernel.tile_ir());
    const Body &b = bodies[l];
    REQUIRE(b.loads.size() == widths[l]);
    REQUIRE(b.adds.size() == widths[l]);
    CHECK(b.loads_first);
    for (size_t i = 0; i < b.adds.size(); ++i) {
      // ((carried + t0) + t1) + ...: term i onto the sum before it.
      CHECK(b.adds[i][1] == b.loads[i]);
      if (i > 0)
        CHECK(b.adds[i][0] == b.adds[i - 1][2]);
    }
  }
  // And it compiles: the loads reach the PTX.
  CHECK(compile(kernel).ptx.find("ld.global") != std::string::npos);
}

TEST_CASE("ordered_sums of one term a step is the plain loop", "[compiler]") {
  const std::vector<Body> bodies = loop_bodies(ordered_kernel(1).tile_ir());
  REQUIRE(bodies.size() == 1);
  CHECK(bodies[0].loads.size() == 1);
  CHECK(bodies[0].adds.size() == 1);
}
