// dsl_test.cpp - Every message of the DSL's element-wise, reduction, shape
// and pipeline calls, each from one deliberate mistake, at the author's line.
#include "dsl_error_of.h"

#include "tilejit/compiler/compile.h"
#include "tilejit/compiler/dsl.h"
#include "tilejit/error.h"

#include <catch2/catch.hpp>

using namespace tilejit;
using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;

TEST_CASE("DSL arithmetic, casts and math reject misuse with one line",
          "[compiler][error]") {
  // Deliberate mistake: mixing dtypes without a cast.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.add(tile(k, x), k.constant(1, DType::i32));
             }),
             EndsWith("error: cannot add values of dtypes f32 and i32; cast "
                      "one of them first"));
  // Deliberate mistake: fragments whose shapes do not broadcast.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.mul(tile(k, x), k.load(x, {k.index(0), k.index(0)}, {4, 16}));
             }),
             Contains("cannot multiply fragments of types tensor<4x32xf32> "
                      "and tensor<4x16xf32>: each dimension must match or "
                      "be 1"));
  // Deliberate mistake: fragments of different ranks.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.sub(tile(k, x), k.reshape(tile(k, x), {128}));
             }),
             Contains("cannot subtract fragments of types tensor<4x32xf32> "
                      "and tensor<128xf32>: ranks differ"));
  // Deliberate mistake: a shift of floats.
  CHECK_THAT(error_of([](auto &k, auto &x) { k.shl(tile(k, x), tile(k, x)); }),
             EndsWith("error: cannot shift values of dtype f32; bitcast to an "
                      "integer dtype first"));
  // Deliberate mistake: a remainder and an xor of floats.
  CHECK_THAT(error_of([](auto &k, auto &x) { k.rem(tile(k, x), tile(k, x)); }),
             EndsWith("error: cannot take the remainder of values of dtype "
                      "f32; rem is of integers (C's %)"));
  CHECK_THAT(
      error_of([](auto &k, auto &x) { k.bit_xor(tile(k, x), tile(k, x)); }),
      EndsWith("error: cannot xor values of dtype f32; bitcast to an integer "
               "dtype first"));
  // Deliberate mistake: select on a value that is not a comparison.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.select(tile(k, x), tile(k, x), tile(k, x));
             }),
             EndsWith("error: select: the condition must be a comparison's "
                      "result"));
  // Deliberate mistake: a condition whose shape does not broadcast with the
  // values'.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               auto narrow = k.load(x, {k.index(0), k.index(0)}, {4, 16});
               k.select(k.lt(tile(k, x), k.constant(0, DType::f32)), narrow,
                        narrow);
             }),
             Contains("cannot select with fragments of types tensor<4x32xi1> "
                      "and tensor<4x16xf32>: each dimension must match or be "
                      "1"));
  // A fragment condition picks between scalars (as numpy's where).
  CHECK(error_of([](auto &k, auto &x) {
          auto t = tile(k, x);
          k.store(k.select(k.lt(t, k.constant(0, DType::f32)),
                           k.constant(-1, DType::f32),
                           k.constant(1, DType::f32)),
                  x, {k.index(0), k.index(0)});
        }) == "");
  // Deliberate mistake: exp of an integer.
  CHECK_THAT(
      error_of([](auto &k, auto &) { k.exp(k.constant(1, DType::i32)); }),
      EndsWith("error: exp: requires an f32 value, got i32"));
  // Deliberate mistake: sqrt of bf16 (compute in f32).
  CHECK_THAT(
      error_of([](auto &k, auto &) { k.sqrt(k.constant(2, DType::bf16)); }),
      EndsWith("error: sqrt: requires an f32 value, got bf16"));
  // Deliberate mistake: fma with an integer operand.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.fma(tile(k, x), tile(k, x), k.constant(1, DType::i32));
             }),
             EndsWith("error: fma: requires three f32 values"));
  // Deliberate mistake: a bitcast between sizes.
  CHECK_THAT(
      error_of([](auto &k, auto &x) { k.bitcast(tile(k, x), DType::bf16); }),
      EndsWith("error: bitcast from f32 to bf16: the sizes differ"));
  // fp8 values read back are fine now (exact through f16).
  CHECK(error_of([](auto &k, auto &x) {
          k.store(k.cast(k.cast(tile(k, x), DType::e4m3), DType::f32), x,
                  {k.index(0), k.index(0)});
        }) == "");
}

TEST_CASE("DSL shuffle_xor rejects misuse with one line", "[compiler][error]") {
  // Deliberate mistake: shuffling a scalar.
  CHECK_THAT(error_of([](auto &k, auto &) {
               k.shuffle_xor(k.constant(1, DType::f32), 0, 1);
             }),
             EndsWith("error: shuffle_xor: the value has type f32; requires a "
                      "fragment"));
  // Deliberate mistake: a dimension the fragment does not have.
  CHECK_THAT(
      error_of([](auto &k, auto &x) { k.shuffle_xor(tile(k, x), 2, 1); }),
      EndsWith("error: shuffle_xor: dim 2 is out of range for a fragment of "
               "rank 2"));
  // Deliberate mistake: 16-bit elements.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.shuffle_xor(k.cast(tile(k, x), DType::bf16), 1, 1);
             }),
             EndsWith("error: shuffle_xor: requires 32-bit elements, got bf16; "
                      "cast to f32 or i32 first"));
  // Deliberate mistake: a mask past the warp.
  CHECK_THAT(
      error_of([](auto &k, auto &x) { k.shuffle_xor(tile(k, x), 1, 32); }),
      EndsWith("error: shuffle_xor: mask 32 must be in 1..31 (lanes of one "
               "warp, within dimension 1 of size 32)"));
  // Deliberate mistake: shuffling along the rows of a (4, 128) tile, whose
  // coordinate is not the thread's (reported when the kernel compiles, at
  // the author's line).
  std::string compile_error;
  try {
    dsl::KernelBuilder k("bad", 128);
    auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
    auto t = k.load(x, {k.index(0), k.index(0)}, {4, 128});
    k.store(k.shuffle_xor(t, 0, 1), x, {k.index(0), k.index(0)});
    compile(k.build());
  } catch (const Error &e) {
    compile_error = e.what();
  }
  CHECK_THAT(compile_error,
             Contains("dsl_test.cpp:") &&
                 Contains("error: 'tile.shuffle_xor' op along dimension 0 of "
                          "'tensor<4x128xf32>' requires the dimensions after "
                          "it to hold one vector of the kernel's layout (4 "
                          "elements; they hold 128): reshape so that they "
                          "do"));
  CHECK_THAT(
      error_of([](auto &k, auto &) { k.shuffle_xor(dsl::Value(), 0, 1); }),
      EndsWith("error: shuffle_xor: the value is an empty dsl::Value"));
}

TEST_CASE("DSL shuffle_idx rejects misuse with one line", "[compiler][error]") {
  // Deliberate mistake: a lane past the group (dimension 1 has 32).
  CHECK_THAT(
      error_of([](auto &k, auto &x) { k.shuffle_idx(tile(k, x), 1, 32); }),
      EndsWith("error: shuffle_idx: lane 32 must be in 0..31 (groups of 32 "
               "along dimension 1 of size 32)"));
  // Deliberate mistake: 64-bit elements.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.shuffle_idx(k.cast(tile(k, x), DType::i64), 1, 0);
             }),
             EndsWith("error: shuffle_idx: requires 32-bit elements, got i64; "
                      "cast to f32 or i32 first"));
  CHECK_THAT(
      error_of([](auto &k, auto &x) { k.shuffle_idx(tile(k, x), -1, 0); }),
      EndsWith("error: shuffle_idx: dim -1 is out of range for a fragment of "
               "rank 2"));
}

TEST_CASE("shuffle_xor compiles to shfl.sync.bfly", "[compiler]") {
  dsl::KernelBuilder k("shuffle", 128);
  auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
  auto t =
      k.reshape(k.load(x, {k.index(0), k.index(0)}, {4, 512}), {4, 128, 4});
  k.store(k.reshape(k.shuffle_xor(t, 1, 16), {4, 512}), x,
          {k.index(0), k.index(0)});
  CompiledKernel c = compile(k.build());
  CHECK(c.ptx.find("shfl.sync.bfly.b32") != std::string::npos);
  CHECK(c.ptx.find("bar.sync") == std::string::npos);
}

TEST_CASE("shuffle_idx compiles to shfl.sync.idx", "[compiler]") {
  dsl::KernelBuilder k("shuffle_lane", 128);
  auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
  auto t =
      k.reshape(k.load(x, {k.index(0), k.index(0)}, {4, 512}), {4, 128, 4});
  k.store(k.reshape(k.shuffle_idx(t, 1, 0), {4, 512}), x,
          {k.index(0), k.index(0)});
  CompiledKernel c = compile(k.build());
  CHECK(c.ptx.find("shfl.sync.idx.b32") != std::string::npos);
  CHECK(c.ptx.find("bar.sync") == std::string::npos);
}

TEST_CASE("a reduction over a reshaped lane dimension is a warp reduction",
          "[compiler]") {
  dsl::KernelBuilder k("warp_sum", 128);
  auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
  auto t = k.reshape(k.load(x, {k.index(0), k.index(0)}, {4, 512}),
                     {4, 4, 32, 4}); // (rows, warps, lanes, vector)
  k.store(k.reshape(k.reduce_sum(t, 2), {4, 16}), x, {k.index(0), k.index(0)});
  CompiledKernel c = compile(k.build());
  size_t shuffles = 0;
  for (size_t at = c.ptx.find("shfl.sync.bfly"); at != std::string::npos;
       at = c.ptx.find("shfl.sync.bfly", at + 1))
    ++shuffles;
  // 16 slots a thread (4 rows x 4 vector elements), each over 5 lane bits.
  CHECK(shuffles == 16 * 5);
  CHECK(c.ptx.find("bar.sync") == std::string::npos);
}

TEST_CASE("fragments in two layouts meet through tile.convert_layout",
          "[compiler]") {
  dsl::KernelBuilder k("relayout", 128);
  auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
  auto c = k.tensor("c", DType::f32, 2);
  auto origin = std::vector<dsl::Value>{k.index(0), k.index(0)};
  auto t = k.load(x, origin, {128, 64});
  auto col = k.load(c, origin, {128, 1});
  // A loaded column broadcast along the rows, and added to a row max.
  k.store(t + k.broadcast(col, {128, 64}), x, origin);
  k.store(k.reduce_max(t, 1) + col, c, origin);
  CompiledKernel compiled = compile(k.build());
  CHECK(compiled.ptx.find("st.shared") != std::string::npos);
  CHECK(compiled.ptx.find("bar.sync") != std::string::npos);
}

TEST_CASE("DSL relayout rejects misuse with one line", "[compiler][error]") {
  // Deliberate mistake: a vector that is not a power of two.
  CHECK_THAT(error_of([](auto &k, auto &x) { k.relayout(tile(k, x), 3); }),
             EndsWith("error: relayout: vector 3 must be a power of two "
                      "(elements a thread holds together)"));
  // Deliberate mistake: relaying out a scalar.
  CHECK_THAT(error_of([](auto &k, auto &) {
               k.relayout(k.constant(1, DType::f32), 4);
             }),
             EndsWith("error: relayout: the value has type f32; requires a "
                      "fragment"));
  // Deliberate mistake: more elements a chunk than the fragment can deal
  // out (4 x 32 over 128 threads; reported when the kernel compiles).
  std::string compile_error;
  try {
    dsl::KernelBuilder k("bad", 128);
    auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
    auto t = k.relayout(k.load(x, {k.index(0), k.index(0)}, {4, 32}), 8);
    k.store(t, x, {k.index(0), k.index(0)});
    compile(k.build());
  } catch (const Error &e) {
    compile_error = e.what();
  }
  CHECK_THAT(compile_error,
             Contains("dsl_test.cpp:") &&
                 Contains("error: 'tile.convert_layout' op to vectors of 8 "
                          "elements: fragment 'tensor<4x32xf32>' has 128 "
                          "elements; requires a multiple of threads x vector "
                          "= 1024"));
}

TEST_CASE("relayout to 8 f32 a thread keeps a sum over 8 in registers",
          "[compiler]") {
  dsl::KernelBuilder k("relayout", 128);
  auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
  auto out = k.tensor("out", DType::f32, 2);
  auto t = k.relayout(k.load(x, {k.index(0), k.index(0)}, {16, 64}), 8);
  auto sums = k.reduce_sum(k.reshape(t, {16, 8, 8}), 2);
  k.store(k.reshape(sums, {16, 8}), out, {k.index(0), k.index(0)});
  CompiledKernel c = compile(k.build());
  CHECK(c.ptx.find("shfl.sync") == std::string::npos);
}

TEST_CASE("a load the author lays out leaves the kernel's vectors alone",
          "[compiler]") {
  // A per-row scale read through a view with a zero stride (no vectors
  // there) beside a tile that moves in 16-byte vectors: laid out by the
  // author (relayout 1), the scale's load does not narrow the tile's.
  // `scales(k, loaded)` turns the loaded scales into a factor for the tile.
  auto ptx = [](int64_t rows, int64_t cols, bool relayout, auto scales) {
    dsl::KernelBuilder k("scaled", 128);
    auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
    auto s = k.tensor("s", DType::f32, 2);
    auto zero = k.index(0);
    auto t = k.load(x, {zero, zero}, {rows, 64});
    auto loaded = k.load(s, {zero, zero}, {rows, cols});
    if (relayout)
      loaded = k.relayout(loaded, 1);
    k.store(t * scales(k, loaded), x, {zero, zero});
    return compile(k.build()).ptx;
  };
  auto row_max = [](dsl::KernelBuilder &k, dsl::Value v) {
    return k.reduce_max(v, 1);
  };
  CHECK(ptx(16, 8, true, row_max).find("ld.global.v4") != std::string::npos);
  CHECK(ptx(16, 8, false, row_max).find("ld.global.v4") == std::string::npos);
  // The same for a column of scales used as they are, through element-wise
  // ops and a reshape, broadcast along the rows (per_token_cast_back).
  auto column = [](dsl::KernelBuilder &k, dsl::Value v) {
    return k.reshape(k.abs(v) + k.constant(1, DType::f32), {128, 1});
  };
  CHECK(ptx(128, 1, true, column).find("ld.global.v4") != std::string::npos);
  CHECK(ptx(128, 1, false, column).find("ld.global.v4") == std::string::npos);
}

TEST_CASE("DSL calls name an empty dsl::Value", "[compiler][error]") {
  // Deliberate mistake: a default-constructed value passed on.
  CHECK_THAT(error_of([](auto &k, auto &) { k.abs(dsl::Value()); }),
             EndsWith("error: cannot take abs of an empty dsl::Value"));
  CHECK_THAT(
      error_of([](auto &k, auto &) { k.cast(dsl::Value(), DType::f32); }),
      EndsWith("error: cannot cast an empty dsl::Value"));
  CHECK_THAT(
      error_of([](auto &k, auto &) { k.bitcast(dsl::Value(), DType::f32); }),
      EndsWith("error: cannot bitcast an empty dsl::Value"));
  CHECK_THAT(error_of([](auto &k, auto &) { k.to_e2m1(dsl::Value()); }),
             EndsWith("error: cannot convert an empty dsl::Value to e2m1"));
  CHECK_THAT(error_of([](auto &k, auto &) { k.pack_nibbles(dsl::Value()); }),
             EndsWith("error: cannot pack the nibbles of an empty "
                      "dsl::Value"));
  CHECK_THAT(error_of([](auto &k, auto &) { k.from_e2m1(dsl::Value()); }),
             EndsWith("error: cannot convert an empty dsl::Value from e2m1"));
  CHECK_THAT(error_of([](auto &k, auto &) { k.to_e5m6(dsl::Value()); }),
             EndsWith("error: cannot convert an empty dsl::Value to e5m6"));
  CHECK_THAT(error_of([](auto &k, auto &) { k.from_e5m6(dsl::Value()); }),
             EndsWith("error: cannot convert an empty dsl::Value from e5m6"));
  CHECK_THAT(error_of([](auto &k, auto &) { k.pack_e5m6(dsl::Value()); }),
             EndsWith("error: cannot pack an empty dsl::Value as e5m6"));
  CHECK_THAT(error_of([](auto &k, auto &) { k.unpack_e5m6(dsl::Value()); }),
             EndsWith("error: cannot unpack an empty dsl::Value as e5m6"));
  CHECK_THAT(error_of([](auto &k, auto &) { k.unpack_nibbles(dsl::Value()); }),
             EndsWith("error: cannot unpack the nibbles of an empty "
                      "dsl::Value"));
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.load(x, {k.index(0), dsl::Value()}, {4, 32});
             }),
             EndsWith("error: an index of the tile origin is an empty "
                      "dsl::Value"));
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.gemm(dsl::Value(), dsl::Value(), tile(k, x));
             }),
             EndsWith("error: gemm: an operand is an empty dsl::Value"));
}

TEST_CASE("DSL shared-tile loads and stores reject misuse with one line",
          "[compiler][error]") {
  // Deliberate mistake: a fragment where a shared tile is expected.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.load(tile(k, x), {k.index(0), k.index(0)}, {4, 32});
             }),
             EndsWith("error: load: the tile has type tensor<4x32xf32>; "
                      "requires a shared tile from alloc_shared"));
  // Deliberate mistake: a 1-index origin for a 2-D tile.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               auto s = k.alloc_shared(DType::f32, {4, 32});
               k.store(tile(k, x), s, {k.index(0)});
             }),
             EndsWith("error: store: the origin has 1 indices; requires 2, one "
                      "per dimension of the tile"));
  // Deliberate mistake: an i32 scalar as an index.
  CHECK_THAT(error_of([](auto &k, auto &) {
               auto s = k.alloc_shared(DType::f32, {4, 32});
               k.load(s, {k.constant(0, DType::i32), k.index(0)}, {4, 32});
             }),
             EndsWith("error: load: an index of the origin is not an index "
                      "value"));
  // Deliberate mistake: storing a scalar.
  CHECK_THAT(error_of([](auto &k, auto &) {
               auto s = k.alloc_shared(DType::f32, {4, 32});
               k.store(k.constant(1, DType::f32), s, {k.index(0), k.index(0)});
             }),
             EndsWith("error: store: the value has type f32; requires a "
                      "fragment"));
}

TEST_CASE("DSL atomics reject misuse with one line", "[compiler][error]") {
  // Deliberate mistake: an atomic of a scalar.
  CHECK_THAT(
      error_of([](auto &k, auto &x) {
        k.atomic_add(k.constant(1, DType::f32), x, {k.index(0), k.index(0)});
      }),
      EndsWith("error: atomic_add: the value has type f32; requires a "
               "fragment"));
  // Deliberate mistake: a bf16 fragment into an f32 tensor.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.atomic_max(k.cast(tile(k, x), DType::bf16), x,
                            {k.index(0), k.index(0)});
             }),
             EndsWith("error: atomic_max: the value is bf16 and the tensor "
                      "f32; requires the same dtype"));
  // Deliberate mistake: an atomic on bf16.
  CHECK_THAT(error_of([](auto &k, auto &) {
               auto y = k.tensor("y", DType::bf16, 2);
               k.atomic_add(k.load(y, {k.index(0), k.index(0)}, {4, 32}), y,
                            {k.index(0), k.index(0)});
             }),
             EndsWith("error: atomic_add: dtype bf16 is not supported; "
                      "requires f32, f64, i32, i64, u32 or u64"));
}

TEST_CASE("DSL loops and branches reject misuse with one line",
          "[compiler][error]") {
  using Values = std::vector<dsl::Value>;
  // Deliberate mistake: a float loop bound.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.serial(k.index(0), k.constant(4, DType::f32), {},
                        [](dsl::Value, Values) { return Values{}; });
             }),
             EndsWith("error: serial: hi has type f32; requires an index or "
                      "integer scalar"));
  // Deliberate mistake: the body forgets a carried value.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.serial(k.index(0), k.index(4), {tile(k, x)},
                        [](dsl::Value, Values) { return Values{}; });
             }),
             EndsWith("error: serial: the body returned 0 values; requires "
                      "1, one per carried value"));
  // Deliberate mistake: the body changes a carried value's type.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.unroll(0, 2, {tile(k, x)}, [&](dsl::Value, Values c) {
                 return Values{k.cast(c[0], DType::bf16)};
               });
             }),
             EndsWith("error: unroll: the body returned value 0 of type "
                      "tensor<4x32xbf16>; requires tensor<4x32xf32>, the type "
                      "it carries"));
  // Deliberate mistake: a fragment as the condition.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               auto t = tile(k, x);
               k.if_else(
                   k.gt(t, t), {}, [](dsl::Value, Values) { return Values{}; },
                   [](dsl::Value, Values) { return Values{}; });
             }),
             EndsWith("error: if_else: the condition has type tensor<4x32xi1>; "
                      "requires an i1 scalar (a comparison of scalars)"));
  // The same through k.when (if_else without an else and values).
  CHECK_THAT(error_of([](auto &k, auto &x) {
               auto t = tile(k, x);
               k.when(k.gt(t, t), [] {});
             }),
             EndsWith("error: if_else: the condition has type tensor<4x32xi1>; "
                      "requires an i1 scalar (a comparison of scalars)"));
  // Deliberate mistake: the branches return different types.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               auto t = tile(k, x);
               k.if_else(
                   k.lt(k.index(0), k.index(1)), {t},
                   [](dsl::Value, Values c) { return c; },
                   [&](dsl::Value, Values c) {
                     return Values{k.cast(c[0], DType::bf16)};
                   });
             }),
             EndsWith("error: if_else: the else branch returned value 0 of "
                      "type tensor<4x32xbf16>; requires tensor<4x32xf32>, the "
                      "type it carries"));
  // Deliberate mistake: an empty value carried.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.serial(k.index(0), k.index(1), {dsl::Value()},
                        [](dsl::Value, Values c) { return c; });
             }),
             EndsWith("error: serial: value 0 is an empty dsl::Value"));
}

TEST_CASE("DSL reductions and shapes reject misuse with one line",
          "[compiler][error]") {
  // Deliberate mistake: a reduction dimension past the rank.
  CHECK_THAT(error_of([](auto &k, auto &x) { k.reduce_max(tile(k, x), 2); }),
             EndsWith("error: reduce_max: dim 2 is out of range for a "
                      "fragment of rank 2"));
  // Deliberate mistake: reducing a scalar.
  CHECK_THAT(error_of([](auto &k, auto &) {
               k.reduce_sum(k.constant(1, DType::f32), 0);
             }),
             EndsWith("error: reduce_sum: the value has type f32; requires a "
                      "fragment"));
  // Deliberate mistake: a reshape that changes the element count.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.reshape(tile(k, x), {4, 16});
             }),
             EndsWith("error: reshape: tensor<4x32xf32> has 128 elements; "
                      "the shape [4, 16] has 64"));
  // Deliberate mistake: a broadcast along a dimension that is not 1.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.broadcast(tile(k, x), {4, 64});
             }),
             EndsWith("error: broadcast: tensor<4x32xf32> cannot be broadcast "
                      "to [4, 64]; each dimension must match or be 1"));
  // Deliberate mistake: iota of floats.
  CHECK_THAT(error_of([](auto &k, auto &) {
               k.iota({4, 32}, 1, DType::f32);
             }),
             EndsWith("error: iota: requires an integer dtype, got f32"));
  // Deliberate mistake: iota along a dimension past the rank.
  CHECK_THAT(error_of([](auto &k, auto &) {
               k.iota({4, 32}, 3);
             }),
             EndsWith("error: iota: dim 3 is out of range for the shape [4, "
                      "32]"));
  // Deliberate mistake: the size of a dimension past the tensor's rank.
  CHECK_THAT(error_of([](auto &k, auto &x) { k.dim(x, 2); }),
             EndsWith("error: dim: 2 is out of range for a tensor of rank 2"));
  // Deliberate mistake: stacking one part.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.stack({k.reshape(tile(k, x), {128, 1})});
             }),
             EndsWith("error: stack: requires at least 2 parts, got 1"));
  // Deliberate mistake: parts of two shapes.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.stack({k.reshape(tile(k, x), {128, 1}),
                        k.reshape(tile(k, x), {4, 32, 1})});
             }),
             EndsWith("error: stack: the parts must have one shape and dtype; "
                      "got tensor<128x1xf32> and tensor<4x32x1xf32>"));
  // Deliberate mistake: parts that are not (..., 1).
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.stack({tile(k, x), tile(k, x)});
             }),
             EndsWith("error: stack: the parts must have a last dimension of "
                      "size 1, got tensor<4x32xf32>"));
  // Deliberate mistake: unstacking a fragment of (..., 1).
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.unstack(k.reshape(tile(k, x), {128, 1}));
             }),
             EndsWith("error: unstack: the fragment must have a last "
                      "dimension of size 2 or more, got tensor<128x1xf32>"));
  // Deliberate mistake: parts too small for the threads (each thread holds
  // whole groups): 256 elements in groups of 4 over 128 threads (reported
  // when the kernel compiles).
  std::string compile_error;
  try {
    dsl::KernelBuilder k("bad", 128);
    auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
    auto t = k.load(x, {k.index(0), k.index(0)}, {8, 32});
    auto parts = k.unstack(k.reshape(t, {64, 4}));
    k.store(k.reshape(parts[0] + parts[1], {2, 32}), x,
            {k.index(0), k.index(0)});
    compile(k.build());
  } catch (const Error &e) {
    compile_error = e.what();
  }
  CHECK_THAT(compile_error,
             Contains("dsl_test.cpp:") &&
                 Contains("error: 'tile.unstack' op of 'tensor<64x4xf32>' "
                          "requires a multiple of threads x 4 = 512 elements "
                          "(each thread holds whole groups of 4)"));
}

TEST_CASE("DSL shared tiles and pipelines reject misuse with one line",
          "[compiler][error]") {
  // Deliberate mistake: an empty shared tile.
  CHECK_THAT(error_of([](auto &k, auto &) {
               k.alloc_shared(DType::bf16, {128, 0});
             }),
             EndsWith("error: alloc_shared: shape [128, 0] must have positive "
                      "sizes"));
  // Deliberate mistake: copying into a fragment instead of a shared tile.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.copy(x, {k.index(0), k.index(0)}, tile(k, x));
             }),
             EndsWith("error: copy: the destination must be a tile from "
                      "alloc_shared"));
  // Deliberate mistake: a pipeline without stages.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.pipelined(
                   k.index(4), 0, {tile(k, x)},
                   [](dsl::Value, std::vector<dsl::Value> c) { return c; });
             }),
             EndsWith("error: pipelined: stages is 0; requires at least 1"));
  // A well-formed pipelined loop builds.
  CHECK(error_of([](auto &k, auto &x) {
          auto r = k.pipelined(k.index(4), 2, {tile(k, x)},
                               [&](dsl::Value, std::vector<dsl::Value> c) {
                                 return std::vector{c[0] + c[0]};
                               });
          k.store(r[0], x, {k.index(0), k.index(0)});
        }) == "");
}

TEST_CASE("DSL math lowers to single PTX instructions, no libdevice",
          "[compiler]") {
  dsl::KernelBuilder k("roots", 128);
  auto x = k.tensor("x", DType::f32, 2);
  auto row = k.block_id(0) * k.index(4);
  auto t = k.load(x, {row, k.index(0)}, {4, 32});
  auto s = k.sqrt(t);
  // fma of a tile, a reduction result and a scalar: broadcasts all around.
  auto f = k.fma(s, k.rsqrt(k.reduce_max(s, 1)), k.constant(1, DType::f32));
  k.store(f, x, {row, k.index(0)});
  std::string ptx = compile(k.build(), CompileOptions{}).ptx;
  CHECK(ptx.find("sqrt.rn.f32") != std::string::npos);
  CHECK(ptx.find("rsqrt.approx.f32") != std::string::npos);
  CHECK(ptx.find("fma.rn.f32") != std::string::npos);
  CHECK(ptx.find("__nv_") == std::string::npos);
}

TEST_CASE("take and put reject misuse with one line", "[compiler][error]") {
  CHECK_THAT(
      error_of([](auto &k, auto &x) { k.take(tile(k, x), 2, k.index(0)); }),
      EndsWith("error: take: dim 2 is out of range for a fragment of "
               "rank 2"));
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.take(tile(k, x), 1, k.constant(1.0, DType::f32));
             }),
             EndsWith("error: take: the index has type f32; requires an "
                      "integer or index"));
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.put(tile(k, x), 1, k.iota({4, 32}, 1), k.index(0));
             }),
             EndsWith("error: put: the index has shape [4, 32]; requires a "
                      "scalar or the shape [4, 1] (the fragment's with dim 1 "
                      "of size 1)"));
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.put(tile(k, x), 0, k.index(0), tile(k, x));
             }),
             EndsWith("error: put: the value has shape [4, 32]; requires a "
                      "scalar or the shape [1, 32]"));
}

TEST_CASE("take from a row a thread holds stays in registers", "[compiler]") {
  dsl::KernelBuilder k("per_thread_array", 128);
  auto x = k.tensor("x", DType::f32, 2);
  auto at = k.tensor("at", DType::i32, 2);
  auto zero = k.index(0);
  auto local = k.relayout(k.load(x, {zero, zero}, {128, 8}), 8);
  auto picked = k.serial(zero, k.index(8), {k.full({128, 1}, 0.0, DType::f32)},
                         [&](dsl::Value i, std::vector<dsl::Value> sum) {
                           return std::vector{sum[0] + k.take(local, 1, i)};
                         })[0];
  k.store(k.put(local, 1, k.index(3), picked), x, {zero, zero});
  CompiledKernel c = compile(k.build());
  CHECK(c.ptx.find("shfl.sync") == std::string::npos);
  CHECK(c.ptx.find("ld.local") == std::string::npos);
  (void)at;
}

TEST_CASE("min_blocks_per_sm reaches ptxas as .minnctapersm", "[compiler]") {
  dsl::KernelBuilder k("occupancy", 64);
  auto x = k.tensor("x", DType::f32, 2);
  k.grid({k.blocks(x, 0)});
  k.min_blocks_per_sm(16);
  k.store(k.load(x, {k.block_id(0), k.index(0)}, {1, 64}) *
              k.constant(2.0, DType::f32),
          x, {k.block_id(0), k.index(0)});
  const CompiledKernel c = compile(k.build());
  CHECK(c.ptx.find(".minnctapersm 16") != std::string::npos);
  CHECK(c.ptx.find(".maxntid 64, 1, 1") != std::string::npos);
}

TEST_CASE("programmatic_launch waits for the grid before at the kernel's "
          "start and says so in the ABI",
          "[compiler]") {
  auto build = [](bool programmatic) {
    dsl::KernelBuilder k("chained", 64);
    auto x = k.tensor("x", DType::f32, 2);
    k.grid({k.blocks(x, 0)});
    if (programmatic)
      k.programmatic_launch();
    k.store(k.load(x, {k.block_id(0), k.index(0)}, {1, 64}) *
                k.constant(2.0, DType::f32),
            x, {k.block_id(0), k.index(0)});
    return compile(k.build());
  };
  const CompiledKernel c = build(true);
  const size_t wait = c.ptx.find("griddepcontrol.wait;");
  REQUIRE(wait != std::string::npos);
  CHECK(c.ptx.find("griddepcontrol.launch_dependents;") > wait);
  CHECK(c.ptx.find("ld.global") > wait); // nothing read before the wait
  CHECK(c.abi.programmatic);
  const CompiledKernel plain = build(false);
  CHECK(plain.ptx.find("griddepcontrol") == std::string::npos);
  CHECK(!plain.abi.programmatic);
}

TEST_CASE("a scalar 64-bit load or store is one 8-byte access, not two "
          "4-byte halves",
          "[compiler]") {
  // The module takes NVPTX's data layout before its translation to LLVM
  // IR, which aligns each access to its type (LLVM's default layout gives
  // i64 4 bytes, and NVPTX then splits the access in two).
  dsl::KernelBuilder k("gather64", 128);
  auto table = k.tensor("table", DType::i64, 1);
  auto at = k.tensor("at", DType::i32, 1);
  auto out = k.tensor("out", DType::i64, 1);
  k.grid({k.blocks(at, 0, 128)});
  auto row = k.block_id(0) * k.index(128);
  auto where = k.load(at, {row}, {128});
  auto lanes = k.iota({128}, 0) + k.cast(row, DType::i32);
  k.store_at(k.load_at(table, {where}), out, {lanes});
  const std::string ptx = compile(k.build()).ptx;
  CHECK(ptx.find("ld.global.b64") != std::string::npos);
  CHECK(ptx.find("st.global.b64") != std::string::npos);
  CHECK(ptx.find("ld.global.b32") == std::string::npos);
  CHECK(ptx.find("st.global.b32") == std::string::npos);
}

TEST_CASE("grid_wait places a programmatic launch's wait after what may "
          "run before it, and rejects misuse with one line",
          "[compiler][error]") {
  // The second kernel of an op: a load of the op's input before the wait,
  // a load of what the first kernel wrote after it.
  dsl::KernelBuilder k("second", 64);
  auto input = k.tensor("input", DType::f32, 1);
  auto counts = k.tensor("counts", DType::f32, 1);
  auto out = k.tensor("out", DType::f32, 1);
  k.grid({k.blocks(input, 0)});
  k.programmatic_launch();
  auto v = k.load(input, {k.block_id(0)}, {64});
  k.grid_wait();
  k.store(v + k.load(counts, {k.block_id(0)}, {64}), out, {k.block_id(0)});
  const CompiledKernel c = compile(k.build());
  const size_t wait = c.ptx.find("griddepcontrol.wait;");
  REQUIRE(wait != std::string::npos);
  CHECK(c.ptx.find("ld.global") < wait); // the input, while waiting
  CHECK(c.ptx.find("ld.global", wait) != std::string::npos);
  CHECK(c.ptx.find("griddepcontrol.launch_dependents;") > wait);
  CHECK(c.ptx.find("st.global") > wait);
  CHECK(c.abi.programmatic);

  // Deliberate mistakes: a kernel that is not a programmatic launch, a
  // wait in a loop, two waits.
  CHECK_THAT(error_of([](auto &k, auto &) { k.grid_wait(); }),
             EndsWith("error: grid_wait: the kernel is not a programmatic "
                      "launch; requires programmatic_launch() before it"));
  CHECK_THAT(error_of([](auto &k, auto &) {
               k.programmatic_launch();
               k.serial(k.index(0), k.index(2), {},
                        [&](dsl::Value, std::vector<dsl::Value>) {
                          k.grid_wait();
                          return std::vector<dsl::Value>{};
                        });
             }),
             EndsWith("error: grid_wait: inside a loop or a branch; requires "
                      "the kernel's body, where every thread waits"));
  CHECK_THAT(error_of([](auto &k, auto &) {
               k.programmatic_launch();
               k.grid_wait();
               k.grid_wait();
             }),
             EndsWith("error: grid_wait: the kernel already waits; requires "
                      "at most one wait"));
}

TEST_CASE("DSL load_scalar rejects misuse with one line, and compiles to one "
          "load a thread",
          "[compiler][error]") {
  // Deliberate mistake: one index for a rank-2 tensor.
  CHECK_THAT(error_of([](auto &k, auto &x) { k.load_scalar(x, {k.index(0)}); }),
             EndsWith("error: load_scalar: 1 indices for a tensor of rank 2; "
                      "requires one a dimension"));
  // Deliberate mistake: a float as an index.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.load_scalar(x, {k.index(0), k.constant(1.0, DType::f32)});
             }),
             EndsWith("error: load_scalar: index 1 is f32; requires an index "
                      "or an integer scalar"));
  // An integer scalar read from memory indexes another load_scalar, and a
  // comparison of it is a branch's condition.
  dsl::KernelBuilder k("scalars", 128);
  auto at = k.tensor("at", DType::i32, 1);
  auto table = k.tensor("table", DType::f32, 1);
  auto out = k.tensor("out", DType::f32, 2);
  auto s = k.load_scalar(at, {k.block_id(0)});
  auto v = k.load_scalar(table, {s});
  k.if_else(
      k.lt(s, k.constant(0, DType::i32)), {},
      [&](dsl::Value, std::vector<dsl::Value>) {
        k.store(k.full({1, 128}, -1.0, DType::f32), out,
                {k.block_id(0), k.index(0)});
        return std::vector<dsl::Value>{};
      },
      [&](dsl::Value, std::vector<dsl::Value>) {
        k.store(k.full({1, 128}, 0.0, DType::f32) + v, out,
                {k.block_id(0), k.index(0)});
        return std::vector<dsl::Value>{};
      });
  const std::string ptx = compile(k.build()).ptx;
  size_t loads = 0;
  for (size_t at = ptx.find("ld.global"); at != std::string::npos;
       at = ptx.find("ld.global", at + 1))
    ++loads;
  CHECK(loads == 2);
}

TEST_CASE("DSL cumsum rejects misuse with one line, and compiles to steps of "
          "one barrier each",
          "[compiler][error]") {
  // Deliberate mistake: a bf16 fragment.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.cumsum(k.cast(tile(k, x), DType::bf16), 1);
             }),
             EndsWith("error: cumsum: a fragment of dtype bf16; requires i32, "
                      "i64 or f32"));
  // Deliberate mistake: a dimension past the rank.
  CHECK_THAT(error_of([](auto &k, auto &x) { k.cumsum(tile(k, x), 2); }),
             EndsWith("error: cumsum: dim 2 is out of range for a fragment of "
                      "rank 2"));
  // Along rows of 32 (5 steps) and columns of 4 (2 steps): a barrier before
  // the writes, after them, and after each step but the last of each.
  dsl::KernelBuilder k("scan", 128);
  auto x = k.tensor("x", DType::i32, 2);
  auto rows = k.load(x, {k.index(0), k.index(0)}, {4, 32});
  k.store(k.cumsum(rows, 1) + k.cumsum(rows, 0), x, {k.index(0), k.index(0)});
  const std::string ptx = compile(k.build()).ptx;
  size_t barriers = 0;
  for (size_t at = ptx.find("bar.sync"); at != std::string::npos;
       at = ptx.find("bar.sync", at + 1))
    ++barriers;
  CHECK(barriers == (2 + 4) + (2 + 1));
}
