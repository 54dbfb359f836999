// op_def_test.cpp - The op declaration on its own: strict parameter
// parsing, the validation every call derives from the declared shapes, the
// kernel ABI's text form, and the DSL's grid and name rules. One deliberate
// mistake per check, each with its message.
#include "common/check.h"
#include "op/typed_op.h"

#include "tilejit/compiler/compile.h"
#include "tilejit/compiler/dsl.h"
#include "tilejit/error.h"

#include <catch2/catch.hpp>

#include <array>
#include <tuple>

using namespace tilejit;

namespace {

struct ToySpec {
  int32_t n = 0;
};
TILEJIT_SPEC_FIELDS(ToySpec, n)

ToySpec toy_spec(const ops::Call &c) {
  return {static_cast<int32_t>(c.dim("N"))};
}

Kernel toy_kernel(const ToySpec &) {
  dsl::KernelBuilder k("toy", 32);
  auto x = k.tensor("x", DType::f32, 2);
  k.grid({k.blocks(x, 0, 4)});
  return k.build();
}

/// An op that is declared, never registered: x (*, N) f32, y (N, k) i64.
const ops::OpDef &toy() {
  static const ops::OpDef op = ops::make_op<ToySpec>(
      {.name = "toy",
       .summary = "a test op",
       .tensors = {ops::input("x", {DType::f32, DType::bf16}, "*, N"),
                   ops::output("y", {DType::i64}, "N, k",
                               ops::Layout::contiguous)},
       .params = {ops::integer("k", 2, 1, 8, "columns"),
                  ops::flag("f", false, "a flag"),
                  ops::real("r", 1.0, 0, "a real"),
                  ops::choice("c", "a", {"a", "b"}, "a choice")},
       .dim_rules = {{.dim = "N", .min = 1, .max = 64, .multiple = 2},
                     {.dim = "k", .at_most = "N"}}},
      {toy_spec, toy_kernel});
  return op;
}

std::string bind_error(std::vector<rt::TensorView> t,
                       std::vector<ops::ParamValue> p = {int64_t{2}, false, 1.0,
                                                         std::string("a")}) {
  try {
    toy().bind(t, p);
  } catch (const UserError &e) {
    return e.what();
  }
  return "";
}

std::string parse_error(std::string_view param, std::string_view text) {
  try {
    ops::parse_param(toy(), *toy().find_param(param), text);
  } catch (const UserError &e) {
    return e.what();
  }
  return "";
}

rt::TensorView view(DType d, std::vector<int64_t> shape) {
  return rt::TensorView::contiguous(0x10000, d, shape);
}

} // namespace

TEST_CASE("--set values are parsed strictly by the parameter's type",
          "[op][error]") {
  CHECK(std::get<int64_t>(
            ops::parse_param(toy(), *toy().find_param("k"), "8")) == 8);
  // Deliberate mistakes, one each.
  CHECK(parse_error("k", "8.5") == "toy: --set k=8.5 is not an integer");
  CHECK(parse_error("k", "1e1") == "toy: --set k=1e1 is not an integer");
  CHECK(parse_error("k", "9223372036854775808") ==
        "toy: --set k=9223372036854775808 is out of range; requires 1 to 8");
  CHECK(parse_error("k", "9") == "toy: --set k=9 is out of range; requires 1 "
                                 "to 8");
  CHECK(parse_error("f", "2") ==
        "toy: --set f=2 is not a bool; requires true, false, 1 or 0");
  CHECK(parse_error("r", "abc") == "toy: --set r=abc is not a finite number");
  CHECK(parse_error("r", "inf") == "toy: --set r=inf is not a finite number");
  CHECK(parse_error("r", "-1") ==
        "toy: --set r=-1 is out of range; requires a finite value >= 0");
  CHECK(parse_error("c", "z") == "toy: --set c=z is not a choice; requires "
                                 "a or b");
}

TEST_CASE("a call is checked against the declared shapes", "[op][error]") {
  CHECK(bind_error({view(DType::f32, {3, 4}), view(DType::i64, {4, 2})}) == "");
  CHECK(bind_error({view(DType::f32, {4}), view(DType::i64, {4, 2})}) == "");
  // Deliberate mistakes, one each.
  CHECK(bind_error({view(DType::i32, {3, 4}), view(DType::i64, {4, 2})}) ==
        "toy: argument 'x' has dtype i32; requires f32 or bf16");
  CHECK(bind_error({view(DType::f32, {3, 4}), view(DType::i64, {4})}) ==
        "toy: argument 'y' has shape [4] (rank 1); requires [N, k] = [4, 2]");
  CHECK(bind_error({view(DType::f32, {3, 4}), view(DType::i64, {5, 2})}) ==
        "toy: argument 'y' has shape [5, 2]; requires [N, k] = [4, 2]");
  CHECK(bind_error({view(DType::f32, {3, 4}), view(DType::i64, {4, 3})}) ==
        "toy: argument 'y' has shape [4, 3]; requires [N, k] = [4, 2]");
  CHECK(bind_error({view(DType::f32, {3, 5}), view(DType::i64, {5, 2})}) ==
        "toy: argument 'x' has shape [3, 5] (N = 5); requires 1 <= N <= 64 "
        "and N a multiple of 2");
  CHECK(bind_error({view(DType::f32, {3, 4}), view(DType::i64, {4, 2})},
                   {int64_t{9}, false, 1.0, std::string("a")}) ==
        "toy: argument 'k' is 9; requires 1 to 8");
  CHECK(bind_error({view(DType::f32, {3, 4}), view(DType::i64, {4, 2})},
                   {int64_t{2}, false, -0.5, std::string("a")}) ==
        "toy: argument 'r' is -0.5; requires a finite value >= 0");
  CHECK(bind_error({view(DType::f32, {3, 4}), view(DType::i64, {4, 2})},
                   {int64_t{2}, false, 1.0, std::string("q")}) ==
        "toy: argument 'c' is 'q'; requires a or b");
  CHECK(bind_error({view(DType::f32, {3, 4}), view(DType::i64, {4, 6})},
                   {int64_t{6}, false, 1.0, std::string("a")}) ==
        "toy: argument 'k' is 6; requires k <= N = 4");
  const int64_t shape[2] = {4, 2}, strides[2] = {4, 1};
  CHECK(bind_error(
            {view(DType::f32, {3, 4}),
             rt::TensorView::strided(0x10000, DType::i64, shape, strides)}) ==
        "toy: argument 'y' is i64[4, 2] strides [4, 1]; requires a "
        "contiguous tensor");
}

TEST_CASE("a parameter of another type than declared is tilejit's bug",
          "[op][error]") {
  const std::vector<rt::TensorView> both = {view(DType::f32, {3, 4}),
                                            view(DType::i64, {4, 2})};
  const std::vector<ops::ParamValue> bool_for_int = {true, false, 1.0,
                                                     std::string("a")};
  CHECK_THROWS_AS(toy().bind(both, bool_for_int), InternalError);
  const std::vector<rt::TensorView> one = {view(DType::f32, {3, 4})};
  CHECK_THROWS_AS(toy().bind(one, {}), InternalError);
}

TEST_CASE("with_defaults fills the parameters after the given ones", "[op]") {
  const std::vector<ops::ParamValue> p = toy().with_defaults({int64_t{5}});
  REQUIRE(p.size() == 4);
  CHECK(std::get<int64_t>(p[0]) == 5);
  CHECK(std::get<bool>(p[1]) == false);
  CHECK(std::get<double>(p[2]) == 1.0);
  CHECK(std::get<std::string>(p[3]) == "a");
  CHECK(toy().with_defaults({}).size() == 4);
  CHECK_THROWS_WITH(
      toy().with_defaults({int64_t{1}, true, 1.0, std::string("a"), 1.0}),
      "internal error: toy given 5 parameters; it declares 4");
}

TEST_CASE("a spec's key names every field of TILEJIT_SPEC_FIELDS", "[op]") {
  const rt::SpecKey key = ops::spec_key("toy", ToySpec{7});
  CHECK(key.get("n") == "7");
  CHECK(key.op() == "toy");
  CHECK(ops::spec_key("toy", ToySpec{8}).digest() != key.digest());
}

TEST_CASE("as_bytes views packed int32 scales as their bytes", "[op]") {
  // Column-major int32 (3, 2), M padded to 4: byte j of (m, w) is group
  // 4w + j of row m.
  const int64_t shape[2] = {3, 2}, strides[2] = {1, 4};
  const rt::TensorView bytes = ops::as_bytes(
      rt::TensorView::strided(0x1000, DType::i32, shape, strides));
  CHECK(bytes.to_string() == "u8[3, 2, 4] strides [4, 16, 1]");
  CHECK(bytes.data == 0x1000);
}

TEST_CASE("the kernel ABI's text reads back as written", "[op][abi]") {
  KernelAbi abi;
  abi.threads = 384;
  abi.shared_bytes = 197632;
  abi.programmatic = true;
  abi.persistent = true;
  abi.has_grid = true;
  abi.grid[0].factors = {{"a", 0, 128}, {"b", 0, 256}};
  abi.grid[2].factors = {{"", 0, 3}};
  abi.args = {{AbiArg::Kind::tensor_map, "a", DType::bf16, 2, 0, {128, 64}},
              {AbiArg::Kind::tensor_map,
               "x",
               DType::bf16,
               3,
               0,
               {1, 64, 64},
               false,
               0,
               0},
              {AbiArg::Kind::size, "a", DType::bf16, 2, 1, {}},
              {AbiArg::Kind::blocks, "grid", DType::i64, 0, 0, {}},
              {AbiArg::Kind::scalar, "s", DType::f32, 0, 0, {}},
              {AbiArg::Kind::tensor, "t", DType::u8, 3, 0, {}, true, 16}};
  std::string why;
  std::optional<KernelAbi> back = KernelAbi::parse(abi.serialize(), why);
  REQUIRE(back);
  CHECK(*back == abi);
  CHECK(abi.serialize().find("arg tensor_map a bf16 2 128 64\n"
                             "arg tensor_map x bf16 3 1 64 64 swizzle 0\n") !=
        std::string::npos);
  CHECK(abi.grid[0].to_string() == "ceil(a[0] / 128) * ceil(b[0] / 256)");
  // Deliberate mistakes, one each.
  CHECK(!GridExtent::parse("ceil(a[0] / 0)", why));
  CHECK(why == "grid factor 'ceil(a[0] / 0)' is not ceil(NAME[DIM] / N)");
  CHECK(!KernelAbi::parse("arg tensor a q32 2\n", why));
  CHECK(why == "malformed ABI line 'arg tensor a q32 2'");
  CHECK(!KernelAbi::parse("arg blocks grid i64 0 3\n", why));
  CHECK(why == "malformed ABI line 'arg blocks grid i64 0 3'");
  CHECK(!KernelAbi::parse("arg tensor_map x bf16 2 64 64 swizzle 32\n", why));
  CHECK(why == "malformed ABI line 'arg tensor_map x bf16 2 64 64 swizzle 32'");
  CHECK(!KernelAbi::parse("grid 0 1\n", why));
  CHECK(why == "the ABI has 1 grid lines; requires 0 or 3");
}

TEST_CASE("a persistent kernel's grid is capped at the SMs, its blocks not",
          "[op][abi]") {
  KernelAbi abi;
  abi.has_grid = true;
  abi.grid[0].factors = {{"a", 0, 128}, {"b", 0, 256}};
  const int64_t a_shape[2] = {1000, 64}, b_shape[2] = {700, 64};
  ops::KernelArgs args;
  args.tensor("a", rt::TensorView::contiguous(0x1000, DType::bf16, a_shape));
  args.tensor("b", rt::TensorView::contiguous(0x2000, DType::bf16, b_shape));
  using Grid = std::array<int64_t, 3>;
  // 8 row tiles x 3 column tiles.
  ops::LaunchGrid g = ops::launch_grid(abi, args, "gemm", 4);
  CHECK(g.blocks == Grid{24, 1, 1});
  CHECK(g.grid == Grid{24, 1, 1}); // not persistent: every block
  abi.persistent = true;
  g = ops::launch_grid(abi, args, "gemm", 4);
  CHECK(g.blocks == Grid{24, 1, 1});
  CHECK(g.grid == Grid{4, 1, 1});
  CHECK(ops::launch_grid(abi, args, "gemm", 0).grid == Grid{24, 1, 1});
  CHECK(ops::launch_grid(abi, args, "gemm", 100).grid == Grid{24, 1, 1});
  const int64_t none[2] = {0, 64};
  args.tensor("a", rt::TensorView::contiguous(0x1000, DType::bf16, none));
  CHECK(ops::launch_grid(abi, args, "gemm", 4).empty());
  // More blocks than a launch takes along y.
  abi.grid[1].factors = {{"", 0, 70000}};
  args.tensor("a", rt::TensorView::contiguous(0x1000, DType::bf16, a_shape));
  CHECK_THROWS_WITH(ops::launch_grid(abi, args, "gemm", 4),
                    "gemm: the tensors' sizes need more than 65535 blocks "
                    "along grid dimension 1 (70000); requires fewer");
}

TEST_CASE("a launch refuses a view that breaks its kernel's promises",
          "[op][abi]") {
  // A kernel tensor of unit last stride and 16-byte aligned rows.
  dsl::KernelBuilder k("promises", 32);
  auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
  k.grid({k.blocks(x, 0, 4)});
  CompiledKernel c = compile(k.build());
  REQUIRE(c.abi.args.size() == 1);
  const AbiArg &a = c.abi.args[0];
  CHECK(a.unit_inner);
  CHECK(a.align_bytes == 16);
  auto error = [&](CUdeviceptr data, std::array<int64_t, 2> shape,
                   std::array<int64_t, 2> strides) -> std::string {
    try {
      ops::check_binding(
          a, rt::TensorView::strided(data, DType::f32, shape, strides), "op");
    } catch (const InternalError &e) {
      return e.what();
    }
    return "";
  };
  CHECK(error(0x1000, {8, 8}, {8, 1}) == "");
  CHECK(error(0x1000, {8, 1}, {4, 7}) == ""); // one column: any stride
  CHECK(error(0x1000, {0, 8}, {8, 2}) == ""); // nothing bound
  CHECK(error(0x1000, {8, 8}, {1, 8}) ==
        "internal error: op: the kernel's tensor 'x' assumes a last stride of "
        "1 and rows aligned to 16 bytes; it is bound to f32[8, 8] strides [1, "
        "8] at 0x1000");
  CHECK(error(0x1004, {8, 8}, {8, 1}) ==
        "internal error: op: the kernel's tensor 'x' assumes a last stride of "
        "1 and rows aligned to 16 bytes; it is bound to f32[8, 8] strides [8, "
        "1] at 0x1004");
  CHECK(error(0x1000, {8, 6}, {6, 1}) != ""); // rows of 24 bytes
}

TEST_CASE("the compiled kernel reports its calling convention", "[op][abi]") {
  CompiledKernel k = compile(toy_kernel({}));
  REQUIRE(k.abi.has_grid);
  CHECK(k.abi.grid[0].to_string() == "ceil(x[0] / 4)");
  CHECK(k.abi.grid[1].to_string() == "1");
  REQUIRE(k.abi.args.size() == 1);
  CHECK(k.abi.args[0].kind == AbiArg::Kind::tensor);
  CHECK(k.abi.args[0].name == "x");
  CHECK(k.abi.threads == 32);
  CHECK(k.abi.shared_bytes == 0);
}

namespace {
template <class F> std::string dsl_error(F &&build) {
  try {
    build();
  } catch (const UserError &e) {
    std::string m = e.what();
    return m.substr(m.find("error: ") + 7);
  }
  return "";
}
} // namespace

TEST_CASE("integers cast to fp8 through f32", "[op][dsl]") {
  // Found by the DSL fuzzer: sitofp to f8E4M3FN reached the LLVM translation.
  for (DType fp8 : {DType::e4m3, DType::e5m2}) {
    dsl::KernelBuilder k("int_to_fp8", 32);
    auto x = k.tensor("x", DType::i32, 2);
    auto y = k.tensor("y", fp8, 2);
    k.grid({k.blocks(x, 0, 32)});
    auto origin = std::vector{k.index(0), k.index(0)};
    k.store(k.cast(k.load(x, origin, {32, 32}), fp8), y, origin);
    CompiledKernel c = compile(k.build());
    CHECK_THAT(c.ptx, Catch::Matchers::Contains("cvt.rn.f32.s32"));
    CHECK_THAT(c.ptx, Catch::Matchers::Contains(
                          fp8 == DType::e4m3 ? "e4m3x2.f32" : "e5m2x2.f32"));
  }
}

TEST_CASE("the DSL names its grid and name mistakes", "[op][dsl][error]") {
  // Deliberate mistakes, one each.
  CHECK(dsl_error([] { dsl::KernelBuilder k("my kernel", 32); }) ==
        "kernel name 'my kernel' is not an identifier; requires an ASCII "
        "letter or '_', then letters, digits or '_'");
  CHECK(dsl_error([] { dsl::KernelBuilder k("1abc", 32); }) ==
        "kernel name '1abc' is not an identifier; requires an ASCII letter or "
        "'_', then letters, digits or '_'");
  CHECK(dsl_error([] { dsl::KernelBuilder k("", 32); }) ==
        "kernel name '' is not an identifier; requires an ASCII letter or "
        "'_', then letters, digits or '_'");
  CHECK(dsl_error([] { dsl::KernelBuilder k("t", 100); }) ==
        "kernel 't' has 100 threads; requires a multiple of 32 from 32 to "
        "1024");
  CHECK(dsl_error([] {
          dsl::KernelBuilder k("t", 32);
          k.tensor("x", DType::f32, 2);
          k.scalar("x", DType::f32);
        }) == "scalar name 'x' is taken by another parameter of this kernel");
  CHECK(dsl_error([] {
          dsl::KernelBuilder k("t", 32);
          k.tensor("a-b", DType::f32, 2);
        }) == "tensor name 'a-b' is not an identifier; requires an ASCII "
              "letter or '_', then letters, digits or '_'");
  CHECK(dsl_error([] {
          dsl::KernelBuilder k("t", 32);
          auto x = k.tensor("x", DType::f32, 2);
          k.blocks(x, 2);
        }) == "blocks: dimension 2 is out of range for a tensor of rank 2");
  CHECK(dsl_error([] {
          dsl::KernelBuilder k("t", 32);
          auto x = k.tensor("x", DType::f32, 2);
          k.grid({k.blocks(x, 0)});
          k.grid({k.blocks(x, 1)});
        }) == "grid: the kernel's grid is declared already");
  CHECK(dsl_error([] {
          dsl::KernelBuilder k("t", 128);
          k.min_blocks_per_sm(17);
        }) == "min_blocks_per_sm: 17 blocks of 128 threads; requires 1 to 32 "
              "blocks and at most 2048 threads an SM");
  CHECK(dsl_error([] {
          dsl::KernelBuilder k("t", 32);
          k.grid({1, 1, 1, 1});
        }) == "grid: 4 dimensions; requires 1 to 3");
  // Found by the DSL fuzzer: fp8 arithmetic reached the LLVM translation.
  CHECK(dsl_error([] {
          dsl::KernelBuilder k("t", 32);
          auto x = k.tensor("x", DType::e4m3, 2);
          auto t = k.load(x, {k.index(0), k.index(0)}, {32, 32});
          k.add(t, k.constant(1.5, DType::e4m3));
        }) == "cannot add values of dtype e4m3: 8-bit floats are for "
              "storage; cast them to f32 first");
  CHECK(dsl_error([] {
          dsl::KernelBuilder k("t", 32);
          auto x = k.tensor("x", DType::e5m2, 2);
          k.reduce_max(k.load(x, {k.index(0), k.index(0)}, {32, 32}), 1);
        }) == "reduce_max: a fragment of dtype e5m2: 8-bit floats are for "
              "storage; cast it to f32 first");
  CHECK(dsl_error([] {
          dsl::KernelBuilder a("a", 32), b("b", 32);
          auto x = a.constant(1.0, DType::f32);
          b.add(x, b.constant(2.0, DType::f32));
        }) == "add: a value comes from another kernel's builder; a "
              "dsl::Value is used only in the kernel that made it");
  CHECK(
      dsl_error([] {
        dsl::KernelBuilder a("a", 32), b("b", 32);
        auto t = b.tensor("t", DType::f32, 2);
        b.store(a.full({32, 32}, 0.0, DType::f32), t, {b.index(0), b.index(0)});
      }) == "store: a value comes from another kernel's builder; a "
            "dsl::Value is used only in the kernel that made it");
}

namespace {

struct OptionalSpec {
  int32_t with_w = 0;
};
TILEJIT_SPEC_FIELDS(OptionalSpec, with_w)

/// x (N) f32, an optional w (N) f32, y (N) f32: declared, never registered.
const ops::OpDef &with_optional() {
  static const ops::OpDef op = ops::make_op<OptionalSpec>(
      {.name = "opt",
       .summary = "a test op with an optional input",
       .tensors = {ops::input("x", {DType::f32}, "N"),
                   ops::optional_input("w", {DType::f32}, "N"),
                   ops::output("y", {DType::f32}, "N")}},
      {[](const ops::Call &c) { return OptionalSpec{c.has("w") ? 1 : 0}; },
       [](const OptionalSpec &s) {
         dsl::KernelBuilder k("opt", 32);
         auto x = k.tensor("x", DType::f32, 1);
         if (s.with_w)
           (void)k.tensor("w", DType::f32, 1);
         k.grid({k.blocks(x, 0, 32)});
         return k.build();
       }});
  return op;
}

std::string optional_error(std::vector<rt::TensorView> t) {
  try {
    with_optional().bind(t, {});
  } catch (const UserError &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("an optional input may be left out, a required one may not",
          "[op][error]") {
  const auto x = view(DType::f32, {64}), y = view(DType::f32, {64});
  const std::vector<rt::TensorView> with = {x, view(DType::f32, {64}), y},
                                    without = {x, ops::absent(), y};
  const ops::Call a = with_optional().bind(with, {});
  const ops::Call b = with_optional().bind(without, {});
  CHECK(a.has("w"));
  CHECK_FALSE(b.has("w"));
  // Left out, nothing about it is checked, and the key says so.
  CHECK(with_optional().key(a).get("with_w") == "1");
  CHECK(with_optional().key(b).get("with_w") == "0");
  // Passed, it is checked as any input.
  CHECK(optional_error({x, view(DType::f32, {32}), y}) ==
        "opt: argument 'w' has shape [32]; requires [N] = [64]");
  CHECK(optional_error({x, view(DType::bf16, {64}), y}) ==
        "opt: argument 'w' has dtype bf16; requires f32");
  // Deliberate mistake: a required input left out.
  CHECK(optional_error({ops::absent(), view(DType::f32, {64}), y}) ==
        "opt: argument 'x' is absent; requires a tensor (only 'w' may be "
        "left out)");
  // The reference's view: an absent input is an empty HostTensor.
  ops::HostCall host{.op = &with_optional()};
  host.inputs.push_back(ref::HostTensor::zeros(DType::f32, {64}));
  host.inputs.emplace_back();
  CHECK(host.has("x"));
  CHECK_FALSE(host.has("w"));
}

TEST_CASE("an optional output may be left out, and the reference knows it",
          "[op][error]") {
  static const ops::OpDef op = ops::make_op<OptionalSpec>(
      {.name = "optout",
       .summary = "a test op with an optional output",
       .tensors = {ops::input("x", {DType::f32}, "N"),
                   ops::output("y", {DType::f32}, "N"),
                   ops::optional_output("count", {DType::i64}, "3")}},
      {[](const ops::Call &c) { return OptionalSpec{c.has("count") ? 1 : 0}; },
       [](const OptionalSpec &) {
         dsl::KernelBuilder k("optout", 32);
         auto x = k.tensor("x", DType::f32, 1);
         k.grid({k.blocks(x, 0, 32)});
         return k.build();
       }});
  const auto x = view(DType::f32, {64}), y = view(DType::f32, {64});
  const std::vector<rt::TensorView> with = {x, y, view(DType::i64, {3})},
                                    without = {x, y, ops::absent()};
  CHECK(op.key(op.bind(with, {})).get("with_w") == "1");
  CHECK(op.key(op.bind(without, {})).get("with_w") == "0");
  try {
    const std::vector<rt::TensorView> wrong = {x, y, view(DType::i64, {4})};
    op.bind(wrong, {});
    FAIL("a count of the wrong shape was taken");
  } catch (const UserError &e) {
    CHECK(std::string(e.what()) ==
          "optout: argument 'count' has shape [4]; requires [3]");
  }
  ops::HostCall host{.op = &op, .absent_outputs = {false, true}};
  CHECK(host.has("y"));
  CHECK_FALSE(host.has("count"));
  host.absent_outputs = {false, false};
  CHECK(host.has("count"));
}

namespace {

/// x (N) f32 -> y (M) f32, M bound by no input: declared, never registered.
const ops::OpDef &unbound_output() {
  static const ops::OpDef op = ops::make_op<OptionalSpec>(
      {.name = "unbound",
       .summary = "a test op whose output has a dimension of its own",
       .tensors = {ops::input("x", {DType::f32}, "N"),
                   ops::output("y", {DType::f32}, "M")}},
      {[](const ops::Call &) { return OptionalSpec{}; },
       [](const OptionalSpec &) {
         dsl::KernelBuilder k("unbound", 32);
         auto x = k.tensor("x", DType::f32, 1);
         k.grid({k.blocks(x, 0, 32)});
         return k.build();
       }});
  return op;
}

std::string layouts_error(const ops::OpDef &op, std::vector<rt::TensorView> t,
                          std::vector<ops::ParamValue> p) {
  try {
    op.output_layouts(t, p);
  } catch (const UserError &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("the outputs' layouts follow from the inputs alone", "[op]") {
  // A declared shape: batched_transpose's out (B, Y, X), x's dtype.
  const ops::OpDef &transpose = *ops::find_op("batched_transpose");
  const std::vector<ops::TensorShape> t = transpose.output_layouts(
      std::vector{view(DType::bf16, {2, 64, 128}), ops::absent()}, {});
  REQUIRE(t.size() == 1);
  CHECK(t[0].dtype == DType::bf16);
  CHECK(t[0].shape == std::vector<int64_t>{2, 128, 64});
  CHECK(t[0].strides == std::vector<int64_t>{8192, 64, 1});
  // Shape-less outputs: per_token_cast's shape_of, by fmt and flags.
  const ops::OpDef &cast = *ops::find_op("per_token_cast");
  auto layouts = [&](std::string fmt, int64_t group) {
    std::vector<ops::ParamValue> p;
    for (const ops::ParamDecl &d : cast.params)
      p.push_back(d.default_value);
    p[cast.param_index("fmt")] = fmt;
    p[cast.param_index("num_per_channels")] = group;
    return cast.output_layouts(std::vector{view(DType::bf16, {256, 7168}),
                                           ops::absent(), ops::absent(),
                                           ops::absent()},
                               p);
  };
  const auto e4m3 = layouts("e4m3", 128), e5m6 = layouts("e5m6", 7168);
  REQUIRE(e4m3.size() == 2);
  CHECK(e4m3[0].dtype == DType::e4m3);
  CHECK(e4m3[0].shape == std::vector<int64_t>{256, 7168});
  CHECK(e4m3[1].dtype == DType::f32);
  CHECK(e4m3[1].shape == std::vector<int64_t>{256, 56});
  CHECK(e5m6[0].dtype == DType::u8);
  CHECK(e5m6[0].shape == std::vector<int64_t>{256, 10752});
  CHECK(e5m6[1].shape == std::vector<int64_t>{256, 1});
}

TEST_CASE("dimensions only outputs bind come from dims_from_inputs", "[op]") {
  // cast_back's (M, K) from its shape-less data: e4m3 (M, K), packed e2m1
  // (M, K / 2), e5m6 bytes (M, 3K / 2).
  const ops::OpDef &back = *ops::find_op("cast_back");
  auto out_of = [&](DType data, int64_t width, const char *fmt) {
    return back.output_layouts(
        std::vector{view(data, {100, width}), view(DType::f32, {100, 56}),
                    ops::absent()},
        std::vector<ops::ParamValue>{int64_t{1}, int64_t{128},
                                     std::string(fmt)})[0];
  };
  for (const auto &[data, width, fmt] :
       {std::tuple{DType::e4m3, int64_t{7168}, "none"},
        std::tuple{DType::i8, int64_t{3584}, "none"},
        std::tuple{DType::u8, int64_t{10752}, "e5m6"}}) {
    const ops::TensorShape out = out_of(data, width, fmt);
    CHECK(out.shape == std::vector<int64_t>{100, 7168});
    CHECK(out.strides == std::vector<int64_t>{7168, 1});
  }
  // per_channel_cast_fused without pos_to_token: one out row a row of x.
  const ops::OpDef &fused = *ops::find_op("per_channel_cast_fused");
  std::vector<ops::ParamValue> p;
  for (const ops::ParamDecl &d : fused.params)
    p.push_back(d.default_value);
  const auto t = fused.output_layouts(std::vector{view(DType::bf16, {256, 512}),
                                                  ops::absent(), ops::absent(),
                                                  ops::absent(), ops::absent()},
                                      p);
  REQUIRE(t.size() == 2);
  CHECK(t[0].shape == std::vector<int64_t>{256, 512});
  CHECK(t[1].shape == std::vector<int64_t>{2, 512});
}

TEST_CASE("the outputs' layouts refuse what a call would", "[op][error]") {
  const ops::OpDef &transpose = *ops::find_op("batched_transpose");
  // Deliberate mistakes: a dtype, a rank, a dim rule of the inputs.
  CHECK(layouts_error(transpose, {view(DType::f64, {2, 64, 64}), ops::absent()},
                      {}) ==
        "batched_transpose: argument 'x' has dtype f64; requires bf16, f16, "
        "f32, e4m3, e5m2, i8, u8, i32, or u32");
  CHECK(layouts_error(transpose, {view(DType::f32, {64, 64}), ops::absent()},
                      {}) ==
        "batched_transpose: argument 'x' has shape [64, 64] (rank 2); "
        "requires [B, X, Y]");
  CHECK(layouts_error(transpose, {view(DType::f32, {2, 60, 64}), ops::absent()},
                      {}) == "batched_transpose: argument 'x' has shape "
                             "[2, 60, 64] (X = 60); requires X a multiple "
                             "of 64");
  // Deliberate mistake: an output dimension no input gives.
  CHECK(layouts_error(unbound_output(), {view(DType::f32, {8}), ops::absent()},
                      {}) ==
        "unbound: output 'y' has dimension M, which no input gives");
}
