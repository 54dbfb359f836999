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
#include <cmath>
#include <random>
#include <set>

using namespace tilejit;
using Catch::Matchers::Contains;

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

TEST_CASE("every op's GPU and benchmark cases compile to PTX that ptxas "
          "takes, with a declared grid",
          "[ops][compile]") {
  const std::optional<std::string> ptxas = rt::find_ptxas();
  size_t compiled = 0;
  for (const harness::OpTest *t : harness::all_tests()) {
    const ops::OpDef &op = *ops::find_op(t->op);
    std::set<std::string> seen;
    for (const harness::Case &c : t->cases) {
      if (c.kind & harness::Case::big)
        continue;
      harness::Resolved r = harness::resolve(op, c);
      std::vector<rt::TensorView> views;
      const ops::Call call = harness::bind_for_compile(r, views);
      const rt::SpecKey key = op.key(call);
      CHECK(key.op() == op.name);
      if (!seen.insert(key.digest()).second)
        continue;
      INFO(op.name << " " << r.label << "\n" << key.canonical());
      // The views a launch binds keep what each kernel assumes of them.
      const ops::KernelArgs args = op.kernel_args(call);
      for (int index = 0; index < op.kernel_count; ++index) {
        INFO("kernel " << index << " of " << op.kernel_count);
        if (index > 0)
          CHECK(op.key(call, index).digest() != key.digest());
        CompiledKernel k = compile(op.kernel(call, index));
        CHECK_THAT(k.ptx, Contains(".target sm_90a"));
        CHECK(k.abi.has_grid);
        CHECK(k.abi.threads == k.threads);
        for (const AbiArg &a : k.abi.args)
          if (a.kind == AbiArg::Kind::tensor) {
            const rt::TensorView *v = args.find_tensor(a.name);
            CHECK(v != nullptr); // every tensor bound (a scratch too)
            if (v)
              CHECK_NOTHROW(ops::check_binding(a, *v, op.name));
          }
        if (ptxas)
          CHECK_NOTHROW(rt::ptx_to_cubin(k.ptx, k.name, "ptxas"));
        ++compiled;
      }
    }
  }
  WARN(compiled << " distinct kernels compiled"
                << (ptxas ? " and taken by ptxas" : ""));
  CHECK(compiled >= 30);
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
