// dsl_warp_test.cpp - The DSL's warp and scatter operations: match_any,
// popcount, store_at and atomic_add_at (global and shared), load_at of a
// shared tile and sync_warp take what they require, each mistake with its
// message, and well-formed ones compile to the PTX they should.
#include "dsl_error_of.h"

#include "tilejit/compiler/compile.h"
#include "tilejit/compiler/dsl.h"

#include <catch2/catch.hpp>

#include <string>

using namespace tilejit;
using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;

namespace {

/// A (4, 32) i32 tile a lane an element.
dsl::Value lanes(dsl::KernelBuilder &k, int dim) {
  return k.relayout(k.iota({4, 32}, dim), 1);
}

} // namespace

TEST_CASE("DSL match_any and popcount take integers along a dimension",
          "[compiler][error]") {
  // Deliberate mistake: a dimension the fragment lacks.
  CHECK_THAT(
      error_of([](auto &k, auto &) { k.match_any(lanes(k, 1), 2); }),
      EndsWith("error: match_any: dim 2 is out of range for a fragment of "
               "rank 2"));
  // Deliberate mistake: floats.
  CHECK_THAT(error_of([](auto &k, auto &x) { k.match_any(tile(k, x), 1); }),
             EndsWith("error: match_any: requires i32, u32, i64 or u64 "
                      "elements, got f32"));
  // Deliberate mistake: the popcount of floats.
  CHECK_THAT(error_of([](auto &k, auto &x) { k.popcount(tile(k, x)); }),
             EndsWith("error: popcount: requires integers, got "
                      "tensor<4x32xf32>"));
}

TEST_CASE("DSL store_at and atomic_add_at take a value of the memory's "
          "dtype and the indices' shape",
          "[compiler][error]") {
  // Deliberate mistake: f32 values into an i32 tensor.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               auto out = k.tensor("out", DType::i32, 1);
               k.store_at(tile(k, x), out, {lanes(k, 1)});
             }),
             EndsWith("error: store_at: the value is f32 and the memory holds "
                      "i32; requires one dtype (cast first)"));
  // Deliberate mistake: a value of another shape than the indices.
  CHECK_THAT(
      error_of([](auto &k, auto &x) {
        k.store_at(tile(k, x), x, {k.iota({8, 32}, 0), k.iota({8, 32}, 1)});
      }),
      EndsWith("error: store_at: the value has shape [4, 32] and the "
               "indices [8, 32]; requires one shape"));
  // Deliberate mistake: a mask that is not a comparison's result.
  CHECK_THAT(
      error_of([](auto &k, auto &x) {
        k.store_at(tile(k, x), x, {lanes(k, 0), lanes(k, 1)}, tile(k, x));
      }),
      EndsWith("error: store_at: the mask has type tensor<4x32xf32>; "
               "requires a comparison's result of shape [4, 32]"));
  // Deliberate mistake: an empty value.
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.store_at(dsl::Value(), x, {lanes(k, 0), lanes(k, 1)});
             }),
             EndsWith("error: store_at: the value is an empty dsl::Value"));
  // Deliberate mistake: an atomic add into a bf16 tile.
  CHECK_THAT(error_of([](auto &k, auto &) {
               auto hist = k.alloc_shared(DType::bf16, {4, 32});
               k.atomic_add_at(k.full({4, 32}, 1, DType::bf16), hist,
                               {lanes(k, 0), lanes(k, 1)});
             }),
             EndsWith("error: atomic_add_at: the tile holds bf16; requires "
                      "i32, u32, i64, u64 or f32"));
  // Deliberate mistake: a global tensor's tile where a shared one goes.
  CHECK_THAT(
      error_of([](auto &k, auto &x) {
        k.atomic_add_at(tile(k, x), tile(k, x), {lanes(k, 0), lanes(k, 1)});
      }),
      EndsWith("error: atomic_add_at: the tile has type "
               "tensor<4x32xf32>; requires a shared tile from "
               "alloc_shared"));
  CHECK_THAT(error_of([](auto &k, auto &x) {
               k.load_at(tile(k, x), {lanes(k, 0), lanes(k, 1)});
             }),
             EndsWith("error: load_at: the tile has type tensor<4x32xf32>; "
                      "requires a shared tile from alloc_shared"));
}

TEST_CASE("DSL match_any, popcount, store_at, atomic_add_at, load_at of "
          "a shared tile and sync_warp compile to warp matches, popc, shared "
          "atomics and warp barriers",
          "[compiler]") {
  dsl::KernelBuilder k("warp_ok", 128);
  auto ids = k.tensor("ids", DType::i32, 2);
  auto out = k.tensor("out", DType::i32, 1);
  auto zero = k.index(0);
  auto id = k.relayout(k.load(ids, {zero, zero}, {4, 32}), 1);
  auto mask = k.match_any(id, 1);
  auto count = k.bitcast(k.popcount(mask), DType::i32);
  auto hist = k.alloc_shared(DType::i32, {4, 32});
  k.store(k.full({4, 32}, 0, DType::i32), hist, {zero, zero});
  k.barrier();
  k.atomic_add_at(count, hist, {lanes(k, 0), id},
                  k.ge(id, k.constant(0, DType::i32)));
  k.barrier();
  auto got = k.load_at(hist, {lanes(k, 0), lanes(k, 1)});
  k.sync_warp();
  k.store_at(got, out, {id});
  const std::string ptx = compile(k.build()).ptx;
  CHECK_THAT(ptx, Contains("bar.warp.sync 	-1;"));
  CHECK_THAT(ptx, Contains("match.any.sync.b32"));
  CHECK_THAT(ptx, Contains("popc.b32"));
  CHECK_THAT(ptx, Contains("atom.shared.add.u32"));
  CHECK_THAT(ptx, Contains("ld.shared.b32"));
}
