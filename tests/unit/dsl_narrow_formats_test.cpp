// dsl_narrow_formats_test.cpp - The DSL's fp4 e2m1 and E5M6 calls and
// their packing: each message from one deliberate mistake, and what the
// packing compiles to (in registers through tile.stack / tile.unstack; a
// destination or source of unknown inner stride element by element).
#include "dsl_error_of.h"

#include "tilejit/compiler/compile.h"
#include "tilejit/compiler/dsl.h"
#include "tilejit/error.h"

#include <catch2/catch.hpp>

using namespace tilejit;
using Catch::Matchers::EndsWith;

TEST_CASE("DSL fp4 e2m1 codes and nibble packing reject misuse with one line",
          "[compiler][error]") {
  // Deliberate mistake: bf16 values (to_e2m1 takes f32).
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.to_e2m1(k.cast(tile(k, x), DType::bf16));
             }),
             EndsWith("error: to_e2m1: the values must be f32, got bf16"));
  // Deliberate mistake: packing f32 values rather than u8 codes.
  CHECK_THAT(error_of([](auto &k, auto &x) { k.pack_nibbles(tile(k, x)); }),
             EndsWith("error: pack_nibbles: the codes must be u8, got f32"));
  // Deliberate mistake: an odd number of codes along the last dimension.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.pack_nibbles(k.to_e2m1(k.reshape(tile(k, x), {32, 4, 1})));
             }),
             EndsWith("error: pack_nibbles: the last dimension must have an "
                      "even size, got shape 32x4x1"));
  // Deliberate mistake: decoding f32 values rather than u8 codes.
  CHECK_THAT(error_of([](auto &k, auto &x) { k.from_e2m1(tile(k, x)); }),
             EndsWith("error: from_e2m1: the codes must be u8, got f32"));
  // Deliberate mistake: unpacking i32 values rather than u8 bytes.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.unpack_nibbles(k.cast(tile(k, x), DType::i32));
             }),
             EndsWith("error: unpack_nibbles: the bytes must be u8, got i32"));
  // Deliberate mistake: bf16 values (to_e5m6 takes f32).
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.to_e5m6(k.cast(tile(k, x), DType::bf16));
             }),
             EndsWith("error: to_e5m6: the values must be f32, got bf16"));
  // Deliberate mistake: decoding f32 values rather than u32 codes.
  CHECK_THAT(error_of([](auto &k, auto &x) { k.from_e5m6(tile(k, x)); }),
             EndsWith("error: from_e5m6: the codes must be u32, got f32"));
  // Deliberate mistake: packing f32 values rather than u32 codes.
  CHECK_THAT(error_of([](auto &k, auto &x) { k.pack_e5m6(tile(k, x)); }),
             EndsWith("error: pack_e5m6: the codes must be u32, got f32"));
  // Deliberate mistake: a last dimension that is not a multiple of 8.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.pack_e5m6(k.to_e5m6(k.reshape(tile(k, x), {32, 4})));
             }),
             EndsWith("error: pack_e5m6: the last dimension must be a "
                      "multiple of 8, got shape 32x4"));
  // Deliberate mistake: unpacking f32 values rather than u32 words.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.unpack_e5m6(k.load(x, {k.index(0), k.index(0)}, {4, 48}));
             }),
             EndsWith("error: unpack_e5m6: the words must be u32, got f32"));
  // Deliberate mistake: a last dimension that is not a multiple of 3.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.unpack_e5m6(k.bitcast(tile(k, x), DType::u32));
             }),
             EndsWith("error: unpack_e5m6: the last dimension must be a "
                      "multiple of 3, got shape 4x32"));
  // Deliberate mistake: unpacking a scalar.
  CHECK_THAT(error_of([](auto &k, auto &) {
               k.unpack_nibbles(k.constant(7, DType::u8));
             }),
             EndsWith("error: unpack_nibbles: the bytes must be a fragment, "
                      "got a scalar"));
}

TEST_CASE("to_e2m1 and pack_nibbles compile to byte stores of packed codes",
          "[compiler]") {
  dsl::KernelBuilder k("e2m1", 128);
  auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
  auto out = k.tensor("out", DType::u8, 2);
  auto t = k.load(x, {k.index(0), k.index(0)}, {4, 64});
  k.store(k.pack_nibbles(k.to_e2m1(t)), out, {k.index(0), k.index(0)});
  CompiledKernel c = compile(k.build());
  CHECK(c.ptx.find("st.global.b8") != std::string::npos);
  CHECK(c.ptx.find("call") == std::string::npos); // no libdevice
}

TEST_CASE("to_e2m1's least form rounds three times an element where select "
          "rounds once",
          "[compiler]") {
  // Each rounding an fma.rn.f32, or an add.rn.f32 where the scale is 1.
  auto roundings = [](dsl::E2m1Encode how) {
    dsl::KernelBuilder k("e2m1", 128);
    auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
    auto out = k.tensor("out", DType::u8, 2);
    auto t = k.load(x, {k.index(0), k.index(0)}, {4, 64});
    k.store(k.pack_nibbles(k.to_e2m1(t, how)), out, {k.index(0), k.index(0)});
    const std::string ptx = compile(k.build()).ptx;
    size_t n = 0;
    for (const char *op : {"fma.rn.f32", "add.rn.f32"})
      for (size_t at = ptx.find(op); at != std::string::npos;
           at = ptx.find(op, at + 1))
        ++n;
    return n;
  };
  const size_t select = roundings(dsl::E2m1Encode::select);
  CHECK(select == 2); // 4 x 64 codes over 128 threads
  CHECK(roundings(dsl::E2m1Encode::least) == 3 * select);
}

TEST_CASE("unpack_nibbles and from_e2m1 compile to byte loads and f32 "
          "stores, in registers",
          "[compiler]") {
  dsl::KernelBuilder k("e2m1_decode", 128);
  auto in = k.tensor("in", DType::u8, 2, dsl::inner_contiguous(16));
  auto out = k.tensor("out", DType::f32, 2, dsl::inner_contiguous(16));
  auto t = k.load(in, {k.index(0), k.index(0)}, {16, 128});
  auto v = k.from_e2m1(k.unpack_nibbles(t));
  CHECK(v.shape() == std::vector<int64_t>{16, 256});
  CHECK(v.dtype() == DType::f32);
  k.store(v, out, {k.index(0), k.index(0)});
  CompiledKernel c = compile(k.build());
  // Each thread's bytes become twice as many codes in its registers (a
  // stack of the nibbles): no shared memory, no barrier; 32 codes a thread
  // go out as 16-byte stores.
  CHECK(c.ptx.find(".shared") == std::string::npos);
  CHECK(c.ptx.find("bar.sync") == std::string::npos);
  CHECK(c.ptx.find("st.global.v4.b32") != std::string::npos);
  CHECK(c.ptx.find("call") == std::string::npos);
}

TEST_CASE("to_e5m6 and pack_e5m6 compile to three words a group of eight",
          "[compiler]") {
  dsl::KernelBuilder k("e5m6", 128);
  auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
  auto out = k.tensor("out", DType::u32, 2, dsl::inner_contiguous(16));
  auto t = k.relayout(k.load(x, {k.index(0), k.index(0)}, {16, 64}), 8);
  auto words = k.pack_e5m6(k.to_e5m6(t));
  CHECK(words.shape() == std::vector<int64_t>{16, 24});
  CHECK(words.dtype() == DType::u32);
  auto codes = k.unpack_e5m6(words);
  CHECK(codes.shape() == std::vector<int64_t>{16, 64});
  CHECK(codes.dtype() == DType::u32);
  k.store(words, out, {k.index(0), k.index(0)});
  CompiledKernel c = compile(k.build());
  // Eight codes a thread pack into its three words in registers, stored
  // one word at a time (a 12-byte chunk is 4-byte aligned).
  CHECK(c.ptx.find(".shared") == std::string::npos);
  CHECK(c.ptx.find("bar.sync") == std::string::npos);
  CHECK(c.ptx.find("st.global.b32") != std::string::npos);
  CHECK(c.ptx.find("st.global.v2") == std::string::npos);
  CHECK(c.ptx.find("call") == std::string::npos);
}

TEST_CASE("unpack_e5m6 reads three words a thread and decodes in registers",
          "[compiler]") {
  dsl::KernelBuilder k("e5m6_decode", 128);
  auto in = k.tensor("in", DType::u32, 2, dsl::inner_contiguous(16));
  auto out = k.tensor("out", DType::f32, 2, dsl::inner_contiguous(16));
  auto words = k.load(in, {k.index(0), k.index(0)}, {16, 24});
  k.store(k.from_e5m6(k.unpack_e5m6(words)), out, {k.index(0), k.index(0)});
  CompiledKernel c = compile(k.build());
  CHECK(c.ptx.find(".shared") == std::string::npos);
  CHECK(c.ptx.find("bar.sync") == std::string::npos);
  CHECK(c.ptx.find("ld.global.b32") != std::string::npos);
  CHECK(c.ptx.find("st.global.v4.b32") != std::string::npos);
}

TEST_CASE("a stacked fragment stored with an unknown inner stride goes "
          "element by element",
          "[compiler]") {
  // The stack's eight codes a thread do not narrow the kernel's vectors (x
  // moves in 16-byte vectors); a destination whose last stride is not known
  // to be 1 takes single elements, not vector stores.
  dsl::KernelBuilder k("e5m6_strided", 128);
  auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
  auto out = k.tensor("out", DType::u32, 2);
  auto words = k.pack_e5m6(
      k.to_e5m6(k.relayout(k.load(x, {k.index(0), k.index(0)}, {16, 64}), 8)));
  k.store(k.unpack_e5m6(words), out, {k.index(0), k.index(0)});
  CompiledKernel c = compile(k.build());
  CHECK(c.ptx.find("ld.global.v4") != std::string::npos);
  CHECK(c.ptx.find("st.global.v") == std::string::npos);
  CHECK(c.ptx.find("st.global.b32") != std::string::npos);
}

TEST_CASE("words of an unknown inner stride reach unpack_e5m6 one at a "
          "time",
          "[compiler]") {
  // A load that feeds an unstack but cannot read whole groups (its last
  // stride is not known to be 1) is laid out as any other load: it narrows
  // the kernel's vectors, so no vector access reaches a strided tensor.
  dsl::KernelBuilder k("e5m6_strided_words", 128);
  auto in = k.tensor("in", DType::u32, 2);
  auto out = k.tensor("out", DType::f32, 2, dsl::inner_contiguous(16));
  auto words = k.load(in, {k.index(0), k.index(0)}, {16, 48});
  k.store(k.from_e5m6(k.unpack_e5m6(words)), out, {k.index(0), k.index(0)});
  CompiledKernel c = compile(k.build());
  CHECK(c.ptx.find("ld.global.v") == std::string::npos);
  CHECK(c.ptx.find("ld.global.b32") != std::string::npos);
}
