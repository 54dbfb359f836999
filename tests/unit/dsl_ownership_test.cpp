// dsl_ownership_test.cpp - What a kernel may be built from: every DSL call
// refuses a value or tensor of another kernel's builder, and tile IR parsed
// from text gets the builder's check of the kernel's name.
#include "tilejit/compiler/compile.h"
#include "tilejit/compiler/dsl.h"
#include "tilejit/compiler/kernel.h"
#include "tilejit/error.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

using namespace tilejit;
using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;

TEST_CASE("every DSL call refuses another kernel's values and tensors",
          "[compiler][error]") {
  using Call = std::function<void(dsl::KernelBuilder & b, dsl::Value v,
                                  const dsl::Tensor &t)>;
  // Each call of builder b gets a's 32 x 32 f32 fragment v or a's tensor t.
  const std::vector<std::pair<std::string, Call>> value_calls = {
      {"abs", [](auto &b, auto v, auto &) { b.abs(v); }},
      {"exp", [](auto &b, auto v, auto &) { b.exp(v); }},
      {"log", [](auto &b, auto v, auto &) { b.log(v); }},
      {"sqrt", [](auto &b, auto v, auto &) { b.sqrt(v); }},
      {"rsqrt", [](auto &b, auto v, auto &) { b.rsqrt(v); }},
      {"bitcast", [](auto &b, auto v, auto &) { b.bitcast(v, DType::i32); }},
      {"reshape", [](auto &b, auto v, auto &) { b.reshape(v, {1024}); }},
      {"relayout", [](auto &b, auto v, auto &) { b.relayout(v, 1); }},
      {"shuffle_xor", [](auto &b, auto v, auto &) { b.shuffle_xor(v, 1, 1); }},
      {"shuffle_idx", [](auto &b, auto v, auto &) { b.shuffle_idx(v, 1, 0); }},
      {"take", [](auto &b, auto v, auto &) { b.take(v, 1, b.index(0)); }},
      {"broadcast",
       [](auto &b, auto v, auto &) {
         b.broadcast(v, {32, 32});
       }},
      {"transpose", [](auto &b, auto v, auto &) { b.transpose(v); }},
      {"reduce_sum", [](auto &b, auto v, auto &) { b.reduce_sum(v, 1); }},
  };
  // The message of `call` on builder b with a's fragment and tensor.
  auto message_of = [](const Call &call) {
    try {
      dsl::KernelBuilder a("a", 32), b("b", 32);
      auto x = a.tensor("x", DType::f32, 2);
      call(b, a.load(x, {a.index(0), a.index(0)}, {32, 32}), x);
    } catch (const UserError &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  for (const auto &[verb, call] : value_calls) {
    INFO(verb);
    CHECK_THAT(message_of(call),
               EndsWith(verb + ": a value comes from another kernel's "
                               "builder; a dsl::Value is used only in the "
                               "kernel that made it"));
  }
  const std::vector<std::pair<std::string, Call>> tensor_calls = {
      {"load",
       [](auto &b, auto, auto &t) {
         b.load(t, {b.index(0), b.index(0)}, {32, 32});
       }},
      {"store",
       [](auto &b, auto, auto &t) {
         b.store(b.full({32, 32}, 0.0, DType::f32), t,
                 {b.index(0), b.index(0)});
       }},
      {"atomic_add",
       [](auto &b, auto, auto &t) {
         b.atomic_add(b.full({32, 32}, 0.0, DType::f32), t,
                      {b.index(0), b.index(0)});
       }},
      {"dim", [](auto &b, auto, auto &t) { b.dim(t, 0); }},
      {"blocks", [](auto &b, auto, auto &t) { b.blocks(t, 0); }},
  };
  for (const auto &[verb, call] : tensor_calls) {
    INFO(verb);
    CHECK_THAT(message_of(call),
               EndsWith(verb + ": the tensor is a parameter of another "
                               "kernel (or of none); a dsl::Tensor is used "
                               "only in the kernel that declared it"));
  }
}

TEST_CASE("parsed tile IR gets the builder's name check", "[compiler][error]") {
  auto parsed = [](std::string name, int threads) {
    const std::string text = fmt::format(
        "func.func @\"{}\"() attributes {{tile.threads = {} : i32}} {{\n"
        "  return\n}}\n",
        name, threads);
    try {
      compile(Kernel::parse(text));
    } catch (const UserError &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  for (std::string name : {"my kernel", "a-b", "caf\xc3\xa9", "1abc", "a.b"})
    CHECK(parsed(name, 32) ==
          fmt::format("kernel name '{}' is not an identifier; requires an "
                      "ASCII letter or '_', then letters, digits or '_'",
                      name));
  CHECK_THAT(parsed("ok", 100),
             Contains("'tile.threads' is 100; requires a multiple of 32 "
                      "between 32 and 1024"));
  CHECK(parsed("ok", 32).empty());
}
