// dsl_fuzz_test.cpp - A seeded DSL fuzzer: random kernel programs, well- and
// ill-typed (loads, element-wise math, casts, reductions, transposes,
// selects, stores, odd shapes and thread counts), through the builder, the
// verifier and the pipeline to PTX. Every program must end in PTX that
// ptxas takes or in a UserError with a message: no crash, no abort, no
// internal error, no compile beyond a bound. TILEJIT_FUZZ_PROGRAMS sets how
// many (default 120), TILEJIT_FUZZ_SEED the first seed (default 2026, so a
// CI run is the same corpus every time; other seeds for longer runs).
#include "tilejit/compiler/compile.h"
#include "tilejit/compiler/dsl.h"
#include "tilejit/error.h"
#include "tilejit/runtime/ptxas.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

using namespace tilejit;

namespace {

struct Program {
  std::mt19937_64 &gen;
  int pick(int n) { return static_cast<int>(gen() % static_cast<uint64_t>(n)); }
  template <class T> const T &one_of(const std::vector<T> &v) {
    return v[static_cast<size_t>(pick(static_cast<int>(v.size())))];
  }

  Kernel build() {
    // Mostly programs that should compile; a tenth with odd thread counts.
    const int threads = pick(10) == 0 ? one_of<int>({96, 48, 100})
                                      : one_of<int>({32, 64, 128, 256});
    dsl::KernelBuilder k("fuzz", threads);
    const int rank = 1 + pick(3);
    const DType in = one_of<DType>(
        {DType::f32, DType::bf16, DType::f16, DType::i32, DType::e4m3});
    const DType out = one_of<DType>({DType::f32, DType::bf16, DType::i32});
    auto x = k.tensor("x", in, rank,
                      pick(2) ? dsl::inner_contiguous(16) : dsl::Access{});
    auto y = k.tensor("y", out, pick(8) ? rank : 1 + pick(3));
    std::vector<int64_t> shape;
    int64_t elements = 1;
    for (int d = 0; d < rank; ++d) {
      shape.push_back(int64_t{1} << pick(8));
      elements *= shape.back();
    }
    // Enough elements for every thread, most of the time.
    while (pick(8) != 0 && elements < threads && shape.back() < 4096) {
      shape.back() *= 2;
      elements *= 2;
    }
    std::vector<dsl::Value> origin;
    for (int d = 0; d < rank + (pick(10) == 0 ? 1 : 0); ++d)
      origin.push_back(d == 0 ? k.block_id(0) * k.index(shape[0]) : k.index(0));
    std::vector<dsl::Extent> grid = {k.blocks(x, 0, shape[0])};
    if (pick(3) == 0)
      grid.push_back(k.blocks(x, rank - 1, 64));
    k.grid(grid);
    dsl::Value v = k.load(x, origin, shape);
    if (pick(5) != 0 && (in == DType::e4m3 || in == DType::bf16))
      v = k.cast(v, DType::f32); // fp8 is for storage; mostly cast first
    const int steps = pick(6);
    for (int s = 0; s < steps; ++s) {
      switch (pick(8)) {
      case 0:
        v = v + k.constant(1.5, v.dtype());
        break;
      case 1:
        v = v * v;
        break;
      case 2:
        v = k.exp(k.cast(v, DType::f32));
        break;
      case 3:
        v = k.cast(v, one_of<DType>({DType::f32, DType::bf16, DType::f16,
                                     DType::i32, DType::e4m3}));
        break;
      case 4:
        if (!v.shape().empty())
          v = pick(2)
                  ? k.reduce_sum(k.cast(v, DType::f32),
                                 pick(static_cast<int>(v.shape().size())))
                  : k.reduce_max(v, pick(static_cast<int>(v.shape().size())));
        break;
      case 5:
        v = k.transpose(v);
        break;
      case 6:
        v = k.select(k.gt(v, k.constant(0, v.dtype())), v,
                     k.constant(0, v.dtype()));
        break;
      default: {
        // A fragment broadcast along the leading dimensions, mostly.
        std::vector<int64_t> last = {v.shape().empty() || pick(5) == 0
                                         ? int64_t{1} << pick(8)
                                         : v.shape().back()};
        v = v + k.full(last, 2.0, v.dtype());
        break;
      }
      }
    }
    std::vector<dsl::Value> at(v.shape().size() + (pick(10) == 0 ? 1 : 0),
                               k.index(0));
    k.store(k.cast(v, out), y, at);
    return k.build();
  }
};

} // namespace

TEST_CASE("DSL fuzzer: every program ends in PTX or in a named error",
          "[dsl][fuzz]") {
  const char *count_env = std::getenv("TILEJIT_FUZZ_PROGRAMS");
  const char *seed_env = std::getenv("TILEJIT_FUZZ_SEED");
  const int programs = count_env ? std::atoi(count_env) : 120;
  const uint64_t seed =
      seed_env ? std::strtoull(seed_env, nullptr, 10) : uint64_t{2026};
  const std::optional<std::string> ptxas = rt::find_ptxas();
  int compiled = 0, refused = 0;
  for (int i = 0; i < programs; ++i) {
    std::mt19937_64 gen(seed + static_cast<uint64_t>(i));
    INFO("TILEJIT_FUZZ_SEED=" << seed + i << " TILEJIT_FUZZ_PROGRAMS=1");
    auto start = std::chrono::steady_clock::now();
    std::string error, tile_ir;
    CompiledKernel k;
    try {
      Kernel kernel = Program{gen}.build();
      tile_ir = kernel.tile_ir();
      k = compile(kernel);
    } catch (const UserError &e) {
      error = e.what();
    } catch (const InternalError &e) {
      FAIL_CHECK(e.what() << "\nthe program:\n" << tile_ir);
      continue;
    }
    // Any other exception fails the test case here.
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (seconds >= 30)
      FAIL_CHECK("compiling took " << seconds << " s; the program:\n"
                                   << tile_ir);
    if (!error.empty()) {
      ++refused;
      if (std::getenv("TILEJIT_FUZZ_VERBOSE"))
        std::fprintf(stderr, "refused: %s\n",
                     error.substr(error.find("error: ")).c_str());
      CHECK_THAT(error, Catch::Matchers::Contains("error: "));
      continue;
    }
    ++compiled;
    CHECK_THAT(k.ptx, Catch::Matchers::Contains(".entry fuzz("));
    if (ptxas)
      CHECK_NOTHROW(rt::ptx_to_cubin(k.ptx, "fuzz", "ptxas"));
  }
  WARN("DSL fuzzer: " << programs << " programs from seed " << seed << ": "
                      << compiled << " compiled, " << refused
                      << " refused with a named error");
  if (programs >= 50) { // both kinds of program are generated
    CHECK(compiled > 0);
    CHECK(refused > 0);
  }
}
