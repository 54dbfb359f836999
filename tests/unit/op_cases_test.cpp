// op_cases_test.cpp - Every op's case table on the CPU: each deliberate
// mistake raises its exact message before any launch, every case resolves
// through the declaration, calls with nothing to write need no GPU, and the
// kernel of every GPU and benchmark case compiles (and ptxas takes it).
#include "fill.h"
#include "op/typed_op.h"
#include "run.h"

#include "tilejit/compiler/compile.h"
#include "tilejit/error.h"
#include "tilejit/runtime/ptxas.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <thread>

using namespace tilejit;

namespace {

std::vector<ops::ParamValue> params_of(const ops::OpDef &op,
                                       const harness::ErrorCase &e) {
  std::vector<ops::ParamValue> params;
  for (const ops::ParamDecl &p : op.params) {
    auto it = e.params.find(p.name);
    params.push_back(it == e.params.end() ? p.default_value : it->second);
  }
  return params;
}

} // namespace

TEST_CASE("every op has a case table with GPU, benchmark and error cases",
          "[ops]") {
  REQUIRE(ops::all_ops().size() >= 7);
  for (const ops::OpDef *op : ops::all_ops()) {
    INFO(op->name);
    const harness::OpTest *t = harness::find_test(op->name);
    REQUIRE(t);
    int gpu = 0, bench = 0;
    for (const harness::Case &c : t->cases) {
      gpu += (c.kind & harness::Case::gpu) != 0;
      bench += (c.kind & harness::Case::bench) != 0;
      // A peer's time belongs to a benchmark row (the bench prints it).
      if (c.peer_us != 0) {
        INFO(c.label << " " << c.shape.size());
        CHECK((c.kind & harness::Case::bench) != 0);
        CHECK(c.peer_us > 0);
      }
    }
    CHECK(gpu > 0);
    CHECK(bench > 0);
    CHECK(!t->errors.empty());
    CHECK((op->reference || t->check));
  }
  for (const harness::OpTest *t : harness::all_tests()) {
    INFO(t->op);
    CHECK(ops::find_op(t->op));
  }
}

TEST_CASE("every op rejects its case table's mistakes with their messages",
          "[ops][error]") {
  for (const harness::OpTest *t : harness::all_tests()) {
    const ops::OpDef &op = *ops::find_op(t->op);
    for (const harness::ErrorCase &e : t->errors) {
      INFO(op.name << ": " << e.label);
      std::string message;
      try {
        op.call(e.tensors, params_of(op, e), nullptr);
      } catch (const UserError &error) {
        message = error.what();
      }
      CHECK(message == e.message);
    }
  }
}

TEST_CASE("every op's default call (no --shape, --dtype or --set) is valid",
          "[ops]") {
  // What `tilejit run OP` and the cold-compile benchmark build.
  for (const ops::OpDef *op : ops::all_ops()) {
    INFO(op->name);
    harness::Resolved r = harness::resolve(*op, {});
    std::vector<rt::TensorView> views;
    CHECK_NOTHROW(harness::bind_for_compile(r, views));
  }
}

TEST_CASE("an optional input left out by default is passed with "
          "--set NAME=passed",
          "[ops]") {
  const ops::OpDef &op = *ops::find_op("per_channel_cast_fused");
  const int x_sf = op.tensor_index("x_sf");
  const int pos = op.tensor_index("pos_to_token");
  harness::Resolved plain = harness::resolve(op, {});
  CHECK(plain.absent[x_sf]);
  CHECK_FALSE(plain.absent[pos]);
  harness::Resolved quantized = harness::resolve(
      op, {.set = {{"x_sf", "passed"}, {"pos_to_token", "none"}}});
  CHECK_FALSE(quantized.absent[x_sf]);
  CHECK(quantized.absent[pos]);
}

TEST_CASE("every case resolves; calls with nothing to write need no GPU",
          "[ops]") {
  for (const harness::OpTest *t : harness::all_tests()) {
    const ops::OpDef &op = *ops::find_op(t->op);
    for (const harness::Case &c : t->cases) {
      harness::Resolved r = harness::resolve(op, c);
      INFO(op.name << " " << r.label);
      std::vector<rt::TensorView> views;
      CHECK_NOTHROW(harness::bind_for_compile(r, views));
      bool empty = true;
      for (size_t i = 0; i < views.size(); ++i)
        empty = empty && (!op.tensors[i].output || views[i].numel() == 0);
      if (empty) // no kernel, no launch: the fake addresses are never used
        CHECK_NOTHROW(op.call(views, r.params, nullptr));
    }
  }
}

TEST_CASE("every case's outputs are the layouts its inputs give "
          "(OpDef::output_layouts, what an allocating caller creates)",
          "[ops]") {
  for (const harness::OpTest *t : harness::all_tests()) {
    const ops::OpDef &op = *ops::find_op(t->op);
    for (const harness::Case &c : t->cases) {
      const harness::Resolved r = harness::resolve(op, c);
      INFO(op.name << " " << r.label);
      std::vector<rt::TensorView> inputs;
      for (size_t i = 0; i < r.tensors.size(); ++i)
        inputs.push_back(op.tensors[i].output || r.absent[i]
                             ? ops::absent()
                             : harness::fake(r.tensors[i].dtype,
                                             r.tensors[i].shape,
                                             r.tensors[i].strides));
      std::vector<ops::TensorShape> layouts;
      CHECK_NOTHROW(layouts = op.output_layouts(inputs, r.params));
      if (layouts.empty())
        continue;
      size_t j = 0;
      for (size_t i = 0; i < r.tensors.size(); ++i) {
        if (!op.tensors[i].output)
          continue;
        const ops::TensorShape &got = layouts.at(j++);
        if (r.absent[i])
          continue;
        INFO(op.tensors[i].name);
        CHECK(got.shape == r.tensors[i].shape);
        CHECK(got.strides == r.tensors[i].strides);
        // The dtype where the case leaves it to the declaration (a case
        // may choose another that the op allows, e.g. cast's out).
        if (!c.dtypes.count(op.tensors[i].name))
          CHECK(got.dtype == r.tensors[i].dtype);
      }
    }
  }
}

namespace {

/// What compiling one op's GPU and benchmark cases found: each problem a
/// line naming the case, the kernel and the check that failed.
struct OpCompiled {
  std::vector<std::string> problems;
  size_t kernels = 0;
};

OpCompiled compile_cases(const harness::OpTest &t,
                         const std::optional<std::string> &ptxas) {
  OpCompiled out;
  const ops::OpDef &op = *ops::find_op(t.op);
  std::set<std::string> seen;
  for (const harness::Case &c : t.cases) {
    if (c.kind & harness::Case::big)
      continue;
    std::string where = fmt::format("{} {}", op.name, c.label);
    auto fail = [&](const std::string &what) {
      out.problems.push_back(fmt::format("{}: {}", where, what));
    };
    try {
      harness::Resolved r = harness::resolve(op, c);
      std::vector<rt::TensorView> views;
      const ops::Call call = harness::bind_for_compile(r, views);
      const rt::SpecKey key = op.key(call);
      if (key.op() != op.name)
        fail(fmt::format("the key names op '{}'", key.op()));
      if (!seen.insert(key.digest()).second)
        continue;
      where = fmt::format("{} {}\n{}", op.name, r.label, key.canonical());
      // The views a launch binds keep what each kernel assumes of them.
      const ops::KernelArgs args = op.kernel_args(call);
      for (int index = 0; index < op.kernel_count; ++index) {
        auto fail_kernel = [&](const std::string &what) {
          fail(
              fmt::format("kernel {} of {}: {}", index, op.kernel_count, what));
        };
        if (index > 0 && op.key(call, index).digest() == key.digest())
          fail_kernel("the same key as kernel 0");
        CompiledKernel k = compile(op.kernel(call, index));
        if (k.ptx.find(".target sm_90a") == std::string::npos)
          fail_kernel("PTX without '.target sm_90a'");
        if (!k.abi.has_grid)
          fail_kernel("no declared grid");
        if (k.abi.threads != k.threads)
          fail_kernel(fmt::format("ABI threads {}, kernel threads {}",
                                  k.abi.threads, k.threads));
        for (const AbiArg &a : k.abi.args)
          if (a.kind == AbiArg::Kind::tensor) {
            const rt::TensorView *v = args.find_tensor(a.name);
            if (!v) // every tensor bound (a scratch too)
              fail_kernel(fmt::format("tensor '{}' not bound", a.name));
            else
              try {
                ops::check_binding(a, *v, op.name);
              } catch (const std::exception &e) {
                fail_kernel(
                    fmt::format("binding of '{}': {}", a.name, e.what()));
              }
          }
        if (ptxas)
          try {
            rt::ptx_to_cubin(k.ptx, k.name, "ptxas");
          } catch (const std::exception &e) {
            fail_kernel(fmt::format("ptxas: {}", e.what()));
          }
        ++out.kernels;
      }
    } catch (const std::exception &e) {
      fail(fmt::format("threw: {}", e.what()));
    }
  }
  return out;
}

} // namespace

TEST_CASE("every op's GPU and benchmark cases compile to PTX that ptxas "
          "takes, with a declared grid",
          "[ops][compile]") {
  // The ops on every core at once (each compile has its own MLIR context
  // and ptxas its own directory), checked here, on the test's thread.
  const std::optional<std::string> ptxas = rt::find_ptxas();
  const std::vector<const harness::OpTest *> tests = harness::all_tests();
  std::vector<OpCompiled> results(tests.size());
  std::atomic<size_t> next{0};
  std::vector<std::thread> workers;
  const unsigned n = std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
  for (unsigned w = 0; w < n; ++w)
    workers.emplace_back([&] {
      for (size_t i; (i = next++) < tests.size();)
        results[i] = compile_cases(*tests[i], ptxas);
    });
  for (std::thread &w : workers)
    w.join();
  size_t compiled = 0;
  for (size_t i = 0; i < tests.size(); ++i) {
    INFO(tests[i]->op);
    for (const std::string &p : results[i].problems)
      FAIL_CHECK(p);
    CHECK(results[i].kernels > 0);
    compiled += results[i].kernels;
  }
  WARN(compiled << " distinct kernels compiled"
                << (ptxas ? " and taken by ptxas" : ""));
  CHECK(compiled >= 30);
}

TEST_CASE("a normal fill draws N(mean, stddev), the same for one seed at "
          "any length",
          "[harness]") {
  const int64_t n = 1 << 20;
  ref::HostTensor t = ref::HostTensor::zeros(DType::f32, {n});
  std::mt19937_64 gen(3);
  harness::fill(t, n, harness::normal(1, 2), gen);
  double sum = 0, squares = 0;
  int64_t past3 = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double v = t.data<float>()[i];
    sum += v;
    squares += (v - 1) * (v - 1);
    past3 += std::fabs(v - 1) > 6; // 3 stddevs: 0.27 %
  }
  CHECK(std::fabs(sum / n - 1) < 0.01);         // 5 standard errors
  CHECK(std::fabs(squares / n / 4 - 1) < 0.01); // about 7
  CHECK(past3 > n * 0.0022);
  CHECK(past3 < n * 0.0032);
  // A shorter fill from the same seed is the longer one's prefix (the
  // values come in chunks of their own streams, whatever the threads).
  ref::HostTensor u = ref::HostTensor::zeros(DType::f32, {n / 3});
  std::mt19937_64 same(3);
  harness::fill(u, n / 3, harness::normal(1, 2), same);
  CHECK(std::memcmp(u.raw(), t.raw(), sizeof(float) * (n / 3)) == 0);
  std::mt19937_64 other(4);
  harness::fill(u, n / 3, harness::normal(1, 2), other);
  CHECK(std::memcmp(u.raw(), t.raw(), sizeof(float) * (n / 3)) != 0);
}

TEST_CASE("uniform and byte-range fills stay in their ranges and cover them",
          "[harness]") {
  ref::HostTensor t = ref::HostTensor::zeros(DType::f32, {200000});
  std::mt19937_64 gen(5);
  harness::fill(t, t.numel(), harness::uniform(-3, 5), gen);
  float least = 1e30f, most = -1e30f;
  for (int64_t i = 0; i < t.numel(); ++i) {
    least = std::min(least, t.data<float>()[i]);
    most = std::max(most, t.data<float>()[i]);
  }
  CHECK(least >= -3.0f);
  CHECK(least < -2.99f);
  CHECK(most < 5.0f);
  CHECK(most > 4.99f);
  ref::HostTensor b = ref::HostTensor::zeros(DType::u8, {100000});
  harness::fill(b, b.numel(), harness::bytes_in(100, 140), gen);
  std::vector<int64_t> seen(256);
  for (int64_t i = 0; i < b.numel(); ++i)
    ++seen[b.data<uint8_t>()[i]];
  for (int v = 0; v < 256; ++v) {
    CAPTURE(v);
    if (v >= 100 && v <= 140)
      CHECK(seen[v] > 2000); // 2439 expected
    else
      CHECK(seen[v] == 0);
  }
}

TEST_CASE("a normal_outside fill draws no value inside its bound",
          "[harness]") {
  ref::HostTensor t = ref::HostTensor::zeros(DType::f32, {100000});
  std::mt19937_64 gen(7);
  harness::fill(t, t.numel(), harness::normal_outside(60, 2), gen);
  float least = 1e30f, most = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    least = std::min(least, std::fabs(t.data<float>()[i]));
    most = std::max(most, std::fabs(t.data<float>()[i]));
  }
  CHECK(least >= 2.0f);
  CHECK(least < 2.1f);  // the bound, not a scaled distribution
  CHECK(most > 120.0f); // its stddev's tails
}
