// apply_rotary.cpp - apply_rotary declared (TileKernels 2.1's rotary
// position embedding, one tensor a call: the Python wrapper calls it for the
// query, then the key, as TileKernels launches them): x bf16 or f32 (T, H,
// R) or (B, T, H, R), R 64 or 128, rotated by the cos and sin of
// cos_sin_cache's row at each token's position, into out (x itself for
// TileKernels' in-place call).
#include "transform/apply_rotary.h"
#include "transform/reference.h"

#include "op/op.h"

#include <algorithm>
#include <bit>
#include <limits>

namespace tilejit::transform {

namespace {

using ops::Layout;

void check(const ops::Call &c) {
  const rt::TensorView &x = c.tensor("x");
  if (x.rank != 3 && x.rank != 4)
    throw UserError(fmt::format(
        "apply_rotary: argument 'x' has rank {}; requires (T, H, R) or (B, T, "
        "H, R)",
        x.rank));
}

ApplyRotarySpec spec(const ops::Call &c) {
  ApplyRotarySpec s;
  s.dtype = c.tensor("x").dtype;
  s.rotary = static_cast<int32_t>(c.dim("R"));
  const int32_t half = s.rotary / 2;
  // Heads a tile: H rounded up to a power of two, at least 32 chunks of 4
  // pairs (a warp's), at most 2048 pairs; up to 256 threads.
  s.heads_block = std::clamp<int32_t>(
      static_cast<int32_t>(std::bit_ceil(
          static_cast<uint64_t>(std::max<int64_t>(c.dim("H"), 1)))),
      128 / half, 4096 / s.rotary);
  const int32_t pairs = s.heads_block * half;
  s.threads = std::min(256, pairs / 4);
  // Few heads: several tokens a block (each with its own position).
  s.tokens = std::clamp(2048 / pairs, 1, 8);
  s.interleaved = c.flag("interleaved") ? 1 : 0;
  s.conjugate = c.flag("conjugate") ? 1 : 0;
  s.positions = c.has("positions") ? 1 : 0;
  if (s.positions)
    s.positions_dtype = c.tensor("positions").dtype;
  s.vector_bytes = ops::vector_bytes(c, {"x", "out"});
  s.cache_vector_bytes = ops::vector_bytes(c, {"cos_sin_cache"});
  return s;
}

/// A (T, H, R) tensor as (1, T, H, R); a 4-D one as it is.
rt::TensorView batched(const rt::TensorView &t) {
  if (t.rank == 4)
    return t;
  const int64_t shape[4] = {1, t.shape[0], t.shape[1], t.shape[2]};
  const int64_t strides[4] = {t.strides[0] * std::max<int64_t>(t.shape[0], 1),
                              t.strides[0], t.strides[1], t.strides[2]};
  return rt::TensorView::strided(t.data, t.dtype, shape, strides);
}

void views(const ops::Call &c, const ApplyRotarySpec &, ops::KernelArgs &args) {
  args.tensor("x4", batched(c.tensor("x")));
  args.tensor("out4", batched(c.tensor("out")));
  const rt::TensorView &cache = c.tensor("cos_sin_cache");
  const int64_t shape[4] = {1, cache.shape[0], c.dim("H"), cache.shape[1]};
  const int64_t strides[4] = {0, cache.strides[0], 0, 1};
  args.tensor("cache_heads",
              rt::TensorView::strided(cache.data, DType::f32, shape, strides));
  if (c.has("positions")) {
    const rt::TensorView &p = c.tensor("positions");
    if (p.rank == 2) {
      args.tensor("positions2", p);
    } else {
      const int64_t pshape[2] = {1, p.shape[0]};
      const int64_t pstrides[2] = {std::max<int64_t>(p.shape[0], 1), 1};
      args.tensor("positions2",
                  rt::TensorView::strided(p.data, p.dtype, pshape, pstrides));
    }
  }
}

} // namespace

const ops::OpDef &apply_rotary_op() {
  static const ops::OpDef op = ops::make_op<ApplyRotarySpec>(
      {.name = "apply_rotary",
       .summary = "rotary position embedding of x's heads (NeoX or GPT-J "
                  "pairs) by cos_sin_cache's row at each token's position; "
                  "out may be x (in place)",
       .tensors =
           {ops::input("x", {DType::bf16, DType::f32}, "*, H, R",
                       Layout::inner_contiguous,
                       "(T, H, R) or (B, T, H, R): query or key"),
            ops::input("cos_sin_cache", {DType::f32}, "L, R",
                       Layout::inner_contiguous,
                       "columns [0, R/2): cos, [R/2, R): sin"),
            ops::absent_by_default(ops::optional_input(
                "positions", {DType::i32, DType::i64}, "*",
                Layout::inner_contiguous,
                "(T,) or (B, T); None: the token's index. A position outside "
                "[0, L) reads cos = sin = 0 (TileKernels reads out of "
                "bounds; the CPU reference refuses it)")),
            ops::output_like("out", "x", "*, H, R", Layout::inner_contiguous,
                             "x rotated; x itself in place")},
       .params = {ops::flag("interleaved", false,
                            "GPT-J pairs (2i, 2i+1), else NeoX (i, i + R/2)"),
                  ops::flag("conjugate", false, "the inverse rotation"),
                  ops::integer("seqlen_offset", 0,
                               std::numeric_limits<int32_t>::min(),
                               std::numeric_limits<int32_t>::max(),
                               "added to every position (in int32)")},
       .dim_rules = {{.dim = "R", .min = 64, .max = 128, .multiple = 64}},
       .cli_shape = "*, H, R",
       .default_shape = {8192, 32, 128},
       .check = check,
       .derived_dims =
           [](const ops::ShapeArgs &) {
             // The cache's rows; --set L=... for another.
             return std::vector<std::pair<std::string, int64_t>>{{"L", 8192}};
           },
       .reference =
           [](const ops::HostCall &c) {
             ref::HostTensor out = c.tensor("x").clone();
             apply_rotary_ref(out, c.tensor("cos_sin_cache"), std::nullopt,
                              c.given("positions"), c.flag("interleaved"),
                              c.flag("conjugate"), c.integer("seqlen_offset"));
             return std::vector{out};
           }},
      {spec, apply_rotary_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(apply_rotary_op);

void apply_rotary(const rt::TensorView &query,
                  const rt::TensorView &cos_sin_cache,
                  const rt::TensorView &key, const rt::TensorView &positions,
                  bool interleaved, bool conjugate, int64_t seqlen_offset,
                  CUstream stream) {
  if (!ops::is_absent(key)) {
    const bool same_tokens =
        key.rank == query.rank && query.rank >= 2 &&
        std::equal(key.shape.begin(), key.shape.begin() + key.rank - 2,
                   query.shape.begin());
    if (key.dtype != query.dtype || !same_tokens)
      throw UserError(fmt::format(
          "apply_rotary: argument 'key' is {}; requires query's dtype {}, "
          "rank {} and tokens (its dimensions before the last two)",
          key.to_string(), name_of(query.dtype), query.rank));
  }
  const ops::OpDef &op = apply_rotary_op();
  const ops::ParamValue params[] = {interleaved, conjugate, seqlen_offset};
  const rt::TensorView q[] = {query, cos_sin_cache, positions, query};
  const ops::Call first = op.bind(q, params);
  if (ops::is_absent(key)) {
    op.run(first, stream);
    return;
  }
  const rt::TensorView k[] = {key, cos_sin_cache, positions, key};
  const ops::Call second = op.bind(k, params);
  op.run(first, stream);
  op.run(second, stream);
}

} // namespace tilejit::transform
