// gemm_test.cpp - gemm's case table: whole tiles, tails in M, N and K,
// size 1 and 0, f16/f32 outputs, f16, fp8 and tf32 inputs, a large product
// spot-checked by rows, the benchmark shapes, and mistakes. Checked against
// the float64 reference within the output's rounding.
#include "op_test.h"

#include "gemm/reference.h"

#include <fmt/format.h>

#include <cmath>
#include <random>

namespace tilejit::harness {

namespace {

/// Every row of products up to 2^30 multiply-adds, else the last row and 15
/// random ones; each element within bf16 rounding (2^-7 relative, above
/// f16's and f32's) plus the accumulation's error: f32 for 16-bit inputs;
/// WGMMA accumulates fp8 products with fewer mantissa bits (about 14) and
/// multiplies f32 inputs as tf32 (10 bits), so those get a 10x wider term.
std::string check_rows(const RunData &run) {
  const ref::HostTensor &a = run.call.tensor("a"), &b = run.call.tensor("b");
  const ref::HostTensor &c = run.output("c");
  const int64_t m = a.size(0), n = b.size(0), k = a.size(1);
  const bool coarse = a.dtype() == DType::e4m3 || a.dtype() == DType::e5m2 ||
                      a.dtype() == DType::f32;
  const double abs_tol =
      (coarse ? 1e-2 : 1e-3) *
      std::sqrt(static_cast<double>(std::max<int64_t>(k, 1)));
  std::string diff;
  auto check_row = [&](int64_t row) {
    std::vector<double> want = gemm::gemm_ref_row(a, b, row);
    for (int64_t col = 0; col < n && diff.empty(); ++col) {
      const int64_t at[2] = {row, col};
      const double v = ref::element_as_double(c, at), w = want[col];
      if (!(std::fabs(v - w) <= std::ldexp(std::fabs(w), -7) + abs_tol))
        diff = fmt::format("c[{}, {}] = {} vs reference {}", row, col, v, w);
    }
  };
  if (m * n * k <= (int64_t{1} << 30)) {
    for (int64_t row = 0; row < m && diff.empty(); ++row)
      check_row(row);
  } else {
    std::mt19937_64 gen(run.seed);
    std::uniform_int_distribution<int64_t> pick(0, m - 1);
    for (int i = 0; i < 16 && diff.empty(); ++i)
      check_row(i == 0 ? m - 1 : pick(gen));
  }
  return diff;
}

} // namespace

TILEJIT_OP_TEST(gemm) {
  OpTest t{.op = "gemm",
           .check = check_rows,
           .flops =
               [](const ops::HostCall &c) {
                 return 2.0 * c.tensor("a").size(0) * c.tensor("b").size(0) *
                        c.tensor("a").size(1);
               },
           .time_launches = true};
  using Shape = std::vector<int64_t>;
  for (const Shape &shape : {Shape{128, 256, 64},
                             {256, 512, 512},
                             {384, 128, 1024},
                             {1000, 1000, 520},
                             {129, 258, 72},
                             {1, 2, 8},
                             {64, 96, 8},
                             {300, 2, 4096},
                             {0, 256, 64},
                             {128, 0, 64},
                             {128, 256, 0}})
    for (DType out : {DType::bf16, DType::f32})
      t.cases.push_back({.shape = shape, .dtypes = {{"c", out}}});
  for (const Shape &shape : {Shape{256, 512, 512}, {129, 258, 72}})
    for (DType out : {DType::f16, DType::bf16, DType::f32})
      t.cases.push_back(
          {.shape = shape, .dtypes = {{"a", DType::f16}, {"c", out}}});
  for (DType in : {DType::e4m3, DType::e5m2, DType::f32})
    for (const Shape &shape : {Shape{256, 512, 1024}, {129, 258, 144}})
      for (DType out : {DType::bf16, DType::f32})
        t.cases.push_back({.shape = shape, .dtypes = {{"a", in}, {"c", out}}});
  t.cases.push_back({.shape = {4096, 4096, 4096}, .kind = Case::big});
  for (auto [shape, in] : {std::pair{Shape{8192, 8192, 8192}, DType::bf16},
                           {Shape{8192, 8192, 8192}, DType::e4m3},
                           {Shape{8192, 8192, 8192}, DType::f32},
                           {Shape{4096, 4096, 4096}, DType::bf16},
                           {Shape{8192, 7168, 2048}, DType::bf16}})
    t.cases.push_back(
        {.shape = shape, .dtypes = {{"a", in}}, .kind = Case::bench});

  const auto a = fake(DType::bf16, {256, 512});
  const auto b = fake(DType::bf16, {128, 512}, {}, 0x200000);
  const auto c = fake(DType::bf16, {256, 128}, {}, 0x400000);
  t.errors = {
      {"an integer a",
       {fake(DType::i32, {256, 512}), b, c},
       {},
       "gemm: argument 'a' has dtype i32; requires bf16, f16, f32, e4m3, or "
       "e5m2"},
      {"b of another dtype",
       {a, fake(DType::f16, {128, 512}), c},
       {},
       "gemm: argument 'b' has dtype f16; requires bf16, the dtype of 'a'"},
      {"rows of 200 bytes",
       {fake(DType::bf16, {256, 100}, {}, 0x100000),
        fake(DType::bf16, {128, 100}), c},
       {},
       "gemm: argument 'a' is bf16[256, 100] strides [100, 1] at 0x100000; "
       "requires rows of a multiple of 16 bytes and a 16-byte-aligned base"},
      {"b of another K",
       {a, fake(DType::bf16, {128, 256}), c},
       {},
       "gemm: argument 'b' has shape [128, 256]; requires [n, k] = [128, "
       "512]"},
      {"c transposed",
       {a, b, fake(DType::bf16, {128, 256})},
       {},
       "gemm: argument 'c' has shape [128, 256]; requires [m, n] = [256, "
       "128]"},
      {"an odd N",
       {a, fake(DType::bf16, {127, 512}), fake(DType::bf16, {256, 127})},
       {},
       "gemm: argument 'c' is bf16[256, 127] strides [127, 1]; requires an "
       "even N, an even row stride and a base aligned to two elements"},
  };
  return t;
}

} // namespace tilejit::harness
