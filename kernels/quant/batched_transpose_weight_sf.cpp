// batched_transpose_weight_sf.cpp - batched_transpose_weight_sf declared:
// one weight's f32 (G, Nn, Nk) power-of-two block scales to the two packed
// UE8M0 int32 layouts (sf0 along n, sf1 along k); the C++ entry takes
// TileKernels' lists (a launch a weight) and 2-D scales (G = 1).
#include "quant/batched_transpose_weight_sf.h"
#include "quant/reference.h"

#include "op/op.h"

#include <array>

namespace tilejit::quant {

static void check(const ops::Call &c) {
  const int64_t bs = c.integer("block_size");
  if (bs != 32 && bs != 128)
    throw UserError(fmt::format("{}: argument 'block_size' is {}; requires "
                                "32 or 128",
                                c.op().name, bs));
  const int64_t n = c.dim("Nn") * bs, k = c.dim("Nk") * bs;
  if (n % 128 != 0 || k % 128 != 0)
    throw UserError(fmt::format("{}: argument 'sf' has Nn x {} = {} and Nk "
                                "x {} = {}; requires both multiples of 128",
                                c.op().name, bs, n, bs, k));
}

static TransposeWeightSfSpec spec(const ops::Call &c) {
  TransposeWeightSfSpec s;
  s.block_size = static_cast<int32_t>(c.integer("block_size"));
  // A thread a column b of the bs repeats: each thread then holds all 4 x
  // cols scales of its column, and both outputs' words are sums within a
  // thread (256 threads at bs 128 shared the sums through shared memory).
  s.threads = s.block_size;
  // 16-byte stores where both outputs start 16-byte aligned (their other
  // strides are multiples of 128 words).
  const bool aligned =
      c.tensor("sf0").data % 16 == 0 && c.tensor("sf1").data % 16 == 0;
  s.vector_bytes = aligned ? 16 : 0;
  return s;
}

/// sf with a stride-0 last dimension of bs, (G, Nn, Nk, bs), and the
/// outputs as words in its order, from their own strides: sf0 (G, Nn, P0,
/// bs) and sf1 (G, P1, Nk, bs).
static void views(const ops::Call &c, const TransposeWeightSfSpec &s,
                  ops::KernelArgs &args) {
  const rt::TensorView &sf = c.tensor("sf"), &sf0 = c.tensor("sf0"),
                       &sf1 = c.tensor("sf1");
  const int64_t g = c.dim("G"), nn = c.dim("Nn"), nk = c.dim("Nk"),
                bs = s.block_size;
  const int64_t p0 = (nk + 3) / 4, p1 = (nn + 3) / 4;
  auto view = [&](const rt::TensorView &t, DType dtype,
                  std::array<int64_t, 4> shape,
                  std::array<int64_t, 4> strides) {
    return rt::TensorView::strided(t.data, dtype, shape, strides);
  };
  args.tensor("sf_k", view(sf, DType::f32, {g, nn, nk, bs},
                           {sf.strides[0], sf.strides[1], 1, 0}));
  // sf0 (G, n, P0) of strides (s0, 1, s2): word [g, i bs + b, p].
  args.tensor("sf0_words", view(sf0, DType::u32, {g, nn, p0, bs},
                                {sf0.strides[0], bs, sf0.strides[2], 1}));
  // sf1 (G, k, P1) of strides (t0, 1, t2), or (G, P1, k) of (t0, t2, 1):
  // word q of k-column m bs + b.
  const int64_t word =
      c.flag("transpose_sf1") ? sf1.strides[1] : sf1.strides[2];
  args.tensor("sf1_words", view(sf1, DType::u32, {g, p1, nk, bs},
                                {sf1.strides[0], word, bs, 1}));
}

static ops::TensorShape out_shape(std::string_view tensor,
                                  const ops::ShapeArgs &a) {
  const int64_t g = a.dim("G"), bs = a.integer("block_size");
  const int64_t n = a.dim("Nn") * bs, k = a.dim("Nk") * bs;
  const int64_t p0 = (a.dim("Nk") + 3) / 4, p1 = (a.dim("Nn") + 3) / 4;
  if (tensor == "sf0")
    return {DType::i32, {g, n, p0}, {p0 * n, 1, n}};
  if (a.flag("transpose_sf1"))
    return {DType::i32, {g, p1, k}, {p1 * k, k, 1}};
  return {DType::i32, {g, k, p1}, {p1 * k, 1, k}};
}

const ops::OpDef &batched_transpose_weight_sf_op() {
  static const ops::OpDef op = ops::make_op<TransposeWeightSfSpec>(
      {.name = "batched_transpose_weight_sf",
       .summary = "a weight's f32 (G, Nn, Nk) power-of-two block scales to "
                  "packed UE8M0 along n (sf0) and along k (sf1) for a "
                  "grouped gemm (TileKernels 2.1)",
       .tensors = {ops::input("sf", {DType::f32}, "G, Nn, Nk",
                              ops::Layout::contiguous, "powers of two or 0"),
                   ops::output("sf0", {DType::i32}, "", ops::Layout::as_shaped,
                               "(G, n, ceil(Nk / 4)) strides (P0 n, 1, n)"),
                   ops::output("sf1", {DType::i32}, "", ops::Layout::as_shaped,
                               "(G, k, ceil(Nn / 4)) strides (P1 k, 1, k), "
                               "or (G, P1, k) with transpose_sf1")},
       .params = {ops::integer("block_size", 128, 1, 1 << 30,
                               "rows and columns a scale covers: 32 or 128"),
                  ops::flag("transpose_sf1", false,
                            "sf1 viewed as (G, P1, k)")},
       .dim_rules = {{.dim = "G", .min = 1}},
       .cli_shape = "G, Nn, Nk",
       .default_shape = {32, 56, 16},
       .check = check,
       .shape_of = out_shape,
       .reference =
           [](const ops::HostCall &c) {
             auto outs = batched_transpose_weight_sf_ref(
                 {c.tensor("sf")}, c.integer("block_size"),
                 {c.flag("transpose_sf1")});
             return std::vector{outs[0].first, outs[0].second};
           }},
      {spec, batched_transpose_weight_sf_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(batched_transpose_weight_sf_op);

void batched_transpose_weight_sf(
    const std::vector<rt::TensorView> &sfs, int64_t block_size,
    const std::vector<bool> &transpose_sf1s,
    const std::vector<std::pair<rt::TensorView, rt::TensorView>> &outs,
    CUstream stream) {
  constexpr std::string_view fn = "batched_transpose_weight_sf";
  if (transpose_sf1s.size() != sfs.size() || outs.size() != sfs.size())
    throw UserError(fmt::format("{}: arguments 'sf', 'transpose_sf1s' and "
                                "'outs' have {}, {} and {} entries; requires "
                                "one each per weight",
                                fn, sfs.size(), transpose_sf1s.size(),
                                outs.size()));
  // A 2-D weight's tensors as G = 1 (the same memory).
  auto grouped = [](const rt::TensorView &t) {
    if (t.rank != 2)
      return t;
    const int64_t shape[3] = {1, t.shape[0], t.shape[1]};
    const int64_t strides[3] = {t.shape[0] * t.strides[0], t.strides[0],
                                t.strides[1]};
    return rt::TensorView::strided(t.data, t.dtype, shape, strides);
  };
  // Every weight is checked before the first launch.
  std::vector<std::vector<rt::TensorView>> tensors;
  std::vector<std::vector<ops::ParamValue>> params;
  for (size_t w = 0; w < sfs.size(); ++w) {
    if (sfs[w].rank != 2 && sfs[w].rank != 3)
      throw UserError(fmt::format("{}: argument 'sf[{}]' is {}; requires "
                                  "rank 2 or 3",
                                  fn, w, sfs[w].to_string()));
    tensors.push_back(
        {grouped(sfs[w]), grouped(outs[w].first), grouped(outs[w].second)});
    params.push_back({block_size, bool(transpose_sf1s[w])});
    batched_transpose_weight_sf_op().bind(tensors.back(), params.back());
  }
  for (size_t w = 0; w < sfs.size(); ++w)
    batched_transpose_weight_sf_op().call(tensors[w], params[w], stream);
}

} // namespace tilejit::quant
