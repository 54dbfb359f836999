// batched_transpose_weight_sf_test.cpp - batched_transpose_weight_sf's case
// table: both block sizes, sf1 straight and transposed, Nn and Nk that are
// not multiples of 4 (padding bytes; with 128 x 128 blocks only), one group and
// many, a benchmark (DeepSeek-V3's expert weights), and mistakes. Compared
// bytewise.
#include "op_test.h"

namespace tilejit::harness {

TILEJIT_OP_TEST(batched_transpose_weight_sf) {
  // Scales 2^-30 .. 2^30.
  OpTest t{.op = "batched_transpose_weight_sf",
           .fills = {{"sf", exponents(-30, 30)}}};
  for (bool transposed : {false, true})
    for (auto [g, nn, nk, bs] :
         {std::tuple<int64_t, int64_t, int64_t, int64_t>{1, 1, 1, 128},
          {3, 56, 16, 128},
          {2, 11, 7, 128},
          {4, 5, 9, 128},
          {1, 4, 4, 32},
          {2, 36, 60, 32},
          {5, 64, 4, 32},
          {16, 16, 56, 128}})
      t.cases.push_back(
          {.shape = {g, nn, nk},
           .set = {{"block_size", std::to_string(bs)},
                   {"transpose_sf1", transposed ? "true" : "false"}}});
  // 256 experts of 4096 x 7168 (w13) and 7168 x 2048 (w2), 128 x 128.
  t.cases.push_back({.shape = {256, 32, 56}, .kind = Case::bench});
  t.cases.push_back({.shape = {256, 56, 16},
                     .set = {{"transpose_sf1", "true"}},
                     .kind = Case::bench});
  const auto sf = fake(DType::f32, {2, 3, 4});
  t.errors = {
      {"a block size of 64",
       {sf, fake(DType::i32, {2, 192, 1}, {192, 1, 192}, 0x20000),
        fake(DType::i32, {2, 256, 1}, {256, 1, 256}, 0x30000)},
       {{"block_size", int64_t{64}}},
       "batched_transpose_weight_sf: argument 'block_size' is 64; requires "
       "32 or 128"},
      {"n not a multiple of 128",
       {sf, fake(DType::i32, {2, 96, 1}, {96, 1, 96}, 0x20000),
        fake(DType::i32, {2, 128, 1}, {128, 1, 128}, 0x30000)},
       {{"block_size", int64_t{32}}},
       "batched_transpose_weight_sf: argument 'sf' has Nn x 32 = 96 and Nk x "
       "32 = 128; requires both multiples of 128"},
      {"sf0 row-major",
       {fake(DType::f32, {2, 3, 8}),
        fake(DType::i32, {2, 384, 2}, {768, 2, 1}, 0x20000),
        fake(DType::i32, {2, 1024, 1}, {1024, 1, 1024}, 0x30000)},
       {},
       "batched_transpose_weight_sf: argument 'sf0' is i32[2, 384, 2] "
       "strides [768, 2, 1]; requires i32[2, 384, 2] strides [>= 768, 1, "
       ">= 384]"},
      {"no groups",
       {fake(DType::f32, {0, 3, 4}),
        fake(DType::i32, {0, 384, 1}, {384, 1, 384}, 0x20000),
        fake(DType::i32, {0, 512, 1}, {512, 1, 512}, 0x30000)},
       {},
       "batched_transpose_weight_sf: argument 'sf' has shape [0, 3, 4] (G = "
       "0); requires G >= 1"},
  };
  return t;
}

} // namespace tilejit::harness
