// engram_hash.cpp - engram_hash declared: i32 token ids (T, n), i64
// multipliers (L, n), i32 vocab_sizes (L, n - 1, M) and offsets (L, (n - 1)
// * M) to the i32 buckets (L, T, (n - 1) * M); TileKernels 2.1's
// image_token_mask sets an image token's buckets to -1.
#include "engram/engram_hash.h"
#include "engram/reference.h"

#include "op/op.h"

#include <algorithm>
#include <bit>

namespace tilejit::engram {

namespace {

void check(const ops::Call &c) {
  const int64_t n = c.dim("n"), m = c.dim("M");
  if (c.dim("n1") != n - 1)
    throw UserError(fmt::format(
        "engram_hash: argument 'vocab_sizes' has {} n-grams a layer; "
        "requires n - 1 = {} (ngram_token_ids has n = {})",
        c.dim("n1"), n - 1, n));
  if (c.dim("C") != (n - 1) * m)
    throw UserError(fmt::format(
        "engram_hash: argument 'offsets' has {} columns a layer; requires "
        "(n - 1) * M = {}",
        c.dim("C"), (n - 1) * m));
}

EngramHashSpec spec(const ops::Call &c) {
  EngramHashSpec s;
  s.ngram = static_cast<int32_t>(c.dim("n"));
  s.tables = static_cast<int32_t>(c.dim("M"));
  s.image = c.has("image_token_mask") ? 1 : 0;
  // About 4 buckets a thread, 32 tokens a block (TileKernels': a thread a
  // token, 32 a block): enough blocks to hide the int64 remainders.
  const int64_t cols = std::bit_ceil(static_cast<uint64_t>(c.dim("C")));
  s.threads = static_cast<int32_t>(std::clamp<int64_t>(32 * cols / 4, 32, 256));
  s.vector_bytes = ops::vector_bytes(c, {"vocab_sizes", "offsets", "out"});
  return s;
}

void views(const ops::Call &c, const EngramHashSpec &, ops::KernelArgs &args) {
  // vocab_sizes (L, n - 1, M) and offsets (L, C) as (L, T, C) rows of
  // stride 0 along the tokens: a size and an offset a column.
  const int64_t tokens = c.dim("T");
  auto layer_rows = [&](const rt::TensorView &t) {
    rt::TensorView rows = t;
    rows.rank = 3;
    rows.shape = {c.dim("L"), tokens, c.dim("C")};
    rows.strides = {t.strides[0], 0, 1};
    return rows;
  };
  args.tensor("vocab_rows", layer_rows(c.tensor("vocab_sizes")));
  args.tensor("offset_rows", layer_rows(c.tensor("offsets")));
  // The ids (T, n) and the mask (T,) repeated along the C columns (stride
  // 0): a column's thread reads its token's.
  const int64_t cols = c.dim("C");
  rt::TensorView ids = c.tensor("ngram_token_ids");
  ids.rank = 3;
  ids.shape[2] = cols;
  ids.strides[2] = 0;
  args.tensor("ngram_token_ids_columns", ids);
  if (c.has("image_token_mask")) {
    rt::TensorView mask = c.tensor("image_token_mask");
    mask.rank = 2;
    mask.shape[1] = cols;
    mask.strides[1] = 0;
    args.tensor("image_token_mask_columns", mask);
  }
}

/// Nothing to hash: no columns (n = 1 or M = 0) or no tokens or layers.
bool nothing(const ops::Call &c, CUstream) {
  return c.dim("C") == 0 || c.dim("T") == 0 || c.dim("L") == 0;
}

} // namespace

const ops::OpDef &engram_hash_op() {
  using ops::Layout;
  static const ops::OpDef op = ops::make_op<EngramHashSpec>(
      {.name = "engram_hash",
       .summary = "Engram's multi-table n-gram hash: floor_mod of the "
                  "running int64 xor of ids * multipliers by each table's "
                  "size, plus its offset",
       .tensors =
           {ops::input("ngram_token_ids", {DType::i32}, "T, n",
                       Layout::contiguous),
            ops::input("multipliers", {DType::i64}, "L, n", Layout::contiguous),
            ops::input("vocab_sizes", {DType::i32}, "L, n1, M",
                       Layout::contiguous, "each > 0"),
            ops::input("offsets", {DType::i32}, "L, C", Layout::contiguous,
                       "C = (n - 1) * M"),
            ops::absent_by_default(ops::optional_input(
                "image_token_mask", {DType::boolean}, "T", Layout::contiguous,
                "2.1: true: an image token, -1 in every column")),
            ops::output("out", {DType::i32}, "L, T, C", Layout::contiguous)},
       .dim_rules = {{.dim = "n", .min = 1}},
       .cli_shape = "T, n, L, M",
       .default_shape = {8001, 3, 2, 8},
       .check = check,
       .special = nothing,
       .derived_dims =
           [](const ops::ShapeArgs &a) {
             const int64_t n1 = std::max<int64_t>(0, a.dim("n") - 1);
             return std::vector<std::pair<std::string, int64_t>>{
                 {"n1", n1}, {"C", n1 * a.dim("M")}};
           },
       .reference =
           [](const ops::HostCall &c) {
             return std::vector{engram_hash_ref(
                 c.tensor("ngram_token_ids"), c.tensor("multipliers"),
                 c.tensor("vocab_sizes"), c.tensor("offsets"),
                 c.given("image_token_mask"))};
           }},
      {spec, engram_hash_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(engram_hash_op);

} // namespace tilejit::engram
