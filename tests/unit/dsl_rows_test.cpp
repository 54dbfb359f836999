// dsl_rows_test.cpp - The DSL's row-indexed and masked accesses: gather,
// scatter, store_where, load_at, and rows read from memory as a tile's
// origin take what they require, each mistake with its message, and
// well-formed ones compile to the PTX they should.
#include "dsl_error_of.h"

#include "tilejit/compiler/compile.h"
#include "tilejit/compiler/dsl.h"

#include <catch2/catch.hpp>

#include <string>

using namespace tilejit;
using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;

TEST_CASE("DSL gather takes a rank-1 integer tensor of rows",
          "[compiler][error]") {
  // Deliberate mistake: f32 row indices.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               auto pos = k.tensor("pos", DType::f32, 1);
               k.gather(x, pos, {k.index(0), k.index(0)}, {4, 32});
             }),
             EndsWith("error: gather: rows must be a rank-1 tensor of i32 or "
                      "i64 row indices, got memref<?xf32, strided<[?], "
                      "offset: ?>>"));
  // Deliberate mistake: a rank-2 tensor of rows.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               auto pos = k.tensor("pos", DType::i32, 2);
               k.gather(x, pos, {k.index(0), k.index(0)}, {4, 32});
             }),
             Contains("gather: rows must be a rank-1 tensor of i32 or i64 row "
                      "indices, got memref<?x?xi32"));
  // A gather of i64 rows builds and compiles to PTX.
  dsl::KernelBuilder k("gather_ok", 128);
  auto x = k.tensor("x", DType::f32, 2);
  auto pos = k.tensor("pos", DType::i64, 1);
  auto out = k.tensor("out", DType::f32, 2);
  k.store(k.gather(x, pos, {k.block_id(0) * k.index(4), k.index(0)}, {4, 32}),
          out, {k.block_id(0) * k.index(4), k.index(0)});
  CHECK_THAT(compile(k.build()).ptx, Contains("ld.global"));
}

TEST_CASE("DSL scatter takes a rank-1 integer tensor of rows and a fragment",
          "[compiler][error]") {
  // Deliberate mistake: f32 row indices.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               auto pos = k.tensor("pos", DType::f32, 1);
               k.scatter(k.load(x, {k.index(0), k.index(0)}, {4, 32}), x, pos,
                         {k.index(0), k.index(0)});
             }),
             EndsWith("error: scatter: rows must be a rank-1 tensor of i32 or "
                      "i64 row indices, got memref<?xf32, strided<[?], "
                      "offset: ?>>"));
  // Deliberate mistake: rows of a vector (rank 1), whose vector accesses
  // would take one row index for several elements.
  CHECK_THAT(error_of([](auto &k, auto &) {
               auto v = k.tensor("v", DType::f32, 1);
               auto pos = k.tensor("pos", DType::i32, 1);
               k.scatter(k.load(v, {k.index(0)}, {32}), v, pos, {k.index(0)});
             }),
             Contains("scatter: the tensor has rank 1; requires rank 2 or "
                      "more (view a vector as (N, 1))"));
  // Deliberate mistake: a scalar where a fragment belongs.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               auto pos = k.tensor("pos", DType::i32, 1);
               k.scatter(k.index(3), x, pos, {k.index(0), k.index(0)});
             }),
             Contains("scatter: the value has type index; requires a "
                      "fragment"));
  // A scatter of a tile and of its row sums (a reduction result) builds and
  // compiles to PTX: each piece reads its row index (sign-extended) and
  // stores.
  dsl::KernelBuilder k("scatter_ok", 128);
  auto x = k.tensor("x", DType::f32, 2);
  auto pos = k.tensor("pos", DType::i32, 1);
  auto out = k.tensor("out", DType::f32, 2);
  auto sums = k.tensor("sums", DType::f32, 2);
  auto r0 = k.block_id(0) * k.index(4);
  auto t = k.load(x, {r0, k.index(0)}, {4, 32});
  k.scatter(t, out, pos, {r0, k.index(0)});
  k.scatter(k.reduce_sum(t, 1), sums, pos, {r0, k.index(0)});
  const std::string ptx = compile(k.build()).ptx;
  CHECK_THAT(ptx, Contains("ld.global.s32"));
  CHECK_THAT(ptx, Contains("st.global.b32"));
}

TEST_CASE("DSL store_where takes an i1 mask of the value's shape",
          "[compiler][error]") {
  // Deliberate mistake: a float fragment as the mask.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               auto t = k.load(x, {k.index(0), k.index(0)}, {4, 32});
               k.store_where(t, t, x, {k.index(0), k.index(0)});
             }),
             Contains("store_where: the mask has type tensor<4x32xf32>; "
                      "requires a comparison's i1 fragment of the value's "
                      "shape tensor<4x32xf32>"));
  // Deliberate mistake: a mask of another shape.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               auto t = k.load(x, {k.index(0), k.index(0)}, {4, 32});
               auto m = k.lt(k.load(x, {k.index(0), k.index(0)}, {8, 32}),
                             k.full({8, 32}, 0, DType::f32));
               k.store_where(m, t, x, {k.index(0), k.index(0)});
             }),
             Contains("store_where: the mask has type tensor<8x32xi1>"));
  // Zeros where an i32 tensor holds -1: predicated scalar stores.
  dsl::KernelBuilder k("store_where_ok", 128);
  auto pos = k.tensor("pos", DType::i32, 2);
  auto out = k.tensor("out", DType::f32, 2);
  auto r0 = k.block_id(0) * k.index(4);
  auto pad = k.eq(k.load(pos, {r0, k.index(0)}, {4, 32}),
                  k.full({4, 32}, -1, DType::i32));
  k.store_where(pad, k.full({4, 32}, 0, DType::f32), out, {r0, k.index(0)});
  CHECK_THAT(compile(k.build()).ptx, Contains("st.global.b32"));
}

TEST_CASE("DSL load_at takes an integer index a dimension, fragments of one "
          "shape",
          "[compiler][error]") {
  auto at = [](auto &k) { return k.iota({4, 32}, 1); };
  // Deliberate mistake: one index for a rank-2 tensor.
  CHECK_THAT(error_of([&](auto &k, auto &x) { k.load_at(x, {at(k)}); }),
             EndsWith("error: load_at: 1 indices for a tensor of rank 2; "
                      "requires one a dimension"));
  // Deliberate mistake: a float fragment as an index.
  CHECK_THAT(error_of([&](auto &k, auto &x) {
               k.load_at(x, {at(k), k.full({4, 32}, 1.0, DType::f32)});
             }),
             EndsWith("error: load_at: index 1 has type tensor<4x32xf32>; "
                      "requires integers"));
  // Deliberate mistake: index fragments of two shapes.
  CHECK_THAT(error_of([&](auto &k, auto &x) {
               k.load_at(x, {at(k), k.iota({8, 32}, 0)});
             }),
             EndsWith("error: load_at: index 1 has shape [8, 32] and an index "
                      "before it [4, 32]; requires one shape"));
  // Deliberate mistake: scalars only (load_scalar's job).
  CHECK_THAT(
      error_of([&](auto &k, auto &x) {
        k.load_at(x, {k.index(0), k.index(1)});
      }),
      EndsWith("error: load_at: every index is a scalar; requires a fragment "
               "among them (load_scalar reads one element)"));
  // A table read at a fragment's rows and a scalar column compiles to one
  // guarded scalar load an element.
  dsl::KernelBuilder k("load_at_ok", 128);
  auto table = k.tensor("table", DType::i32, 2);
  auto out = k.tensor("out", DType::i32, 2);
  auto r0 = k.block_id(0) * k.index(4);
  k.store(k.load_at(table, {k.iota({4, 32}, 1), k.index(2)}), out,
          {r0, k.index(0)});
  CHECK_THAT(compile(k.build()).ptx, Contains("ld.global.b32"));
}

TEST_CASE("DSL load and store take integer scalars as origin indices and "
          "reject floats with one line",
          "[compiler][error]") {
  // Deliberate mistakes: a float as a tile's row.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.load(x, {k.constant(1.0, DType::f32), k.index(0)}, {1, 32});
             }),
             EndsWith("error: load: index 0 is f32; requires an index or an "
                      "integer scalar"));
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.store(k.full({1, 32}, 0.0, DType::f32), x,
                       {k.index(0), k.constant(2.0, DType::f32)});
             }),
             EndsWith("error: store: index 1 is f32; requires an index or an "
                      "integer scalar"));
  // A row read from memory (a position) picks the row a tile loads; the
  // load stays bounds-checked (a negative row reads zeros).
  dsl::KernelBuilder k("row_from_memory", 32);
  auto at = k.tensor("at", DType::i32, 1);
  auto table = k.tensor("table", DType::f32, 2);
  auto out = k.tensor("out", DType::f32, 2);
  auto row = k.load_scalar(at, {k.block_id(0)});
  k.store(k.load(table, {row, k.index(0)}, {1, 32}), out, {row, k.index(0)});
  const std::string ptx = compile(k.build()).ptx;
  // The row sign-extended as it is read, then compared unsigned.
  CHECK(ptx.find("ld.global.s32") != std::string::npos);
  CHECK(ptx.find("setp.ge.u64") != std::string::npos);
}
