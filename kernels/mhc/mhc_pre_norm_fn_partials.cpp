// mhc_pre_norm_fn_partials.cpp - mhc_pre_norm_fn_partials declared
// (tilejit's own op: TileKernels 2.1 leaves this product to an external
// GEMM): the residual bf16 (T, mhc, H) as x (T, Kd), Kd = mhc H, split in
// n_splits equal parts; gemm_out_mul[s, t, j] = the part's x . tf32(fn[j])
// and gemm_out_sqrsum[s, t] = its sum of x^2, for
// mhc_reduce_partials_and_rmsnorm_fwd and mhc_pre_big_fuse_fwd. fn has up
// to 32 rows: mhc (mhc + 2) for mhc_pre, mhc for mhc_head.
#include "mhc/mhc_pre_norm_fn_partials.h"
#include "mhc/mhc_stream.h"
#include "mhc/reference.h"

#include "op/op.h"

#include <algorithm>

namespace tilejit::mhc {

namespace {

void check(const ops::Call &c) {
  check_norm_fn_dims(c);
  const int64_t kd = c.dim("mhc") * c.dim("H"), splits = c.integer("n_splits");
  if (kd % splits != 0 || (kd / splits) % 8 != 0)
    throw UserError(fmt::format(
        "mhc_pre_norm_fn_partials: argument 'n_splits' is {}; requires "
        "equal parts of mhc * H = {} columns, each a multiple of 8",
        splits, kd));
}

/// Shared bytes of the kernel, at most: a bf16 x and an f32 fn tile a
/// stage (one unpipelined; rows padded by 16 and 32 bytes for mma.sync),
/// the product's 4 KB buffer and 1 KB to spare (the compiler asks for
/// 56320 bytes at 2 stages of 128 columns, 32 tokens).
int64_t shared_bytes(int64_t tokens, int64_t chunk, int64_t stages) {
  return std::max<int64_t>(stages, 1) *
             (tokens * (2 * chunk + 16) + 32 * (4 * chunk + 32)) +
         5120;
}

MhcNormFnSpec spec(const ops::Call &c) {
  const int64_t part = c.dim("mhc") * c.dim("H") / c.integer("n_splits");
  MhcNormFnSpec s;
  s.stages = static_cast<int32_t>(c.integer("stages"));
  // 64 tokens a block and x's squares summed by vectors of 8 columns: 13-15 %
  // faster than 32 tokens by single columns at 8192 tokens (an H100, session
  // 68: 202.6 -> 180.5 us at stages 0, 172.5 -> 147.1 us at 2, mhc 4, H
  // 4096), as each fn chunk serves twice the tokens; below 1024 tokens 32
  // keep twice the blocks to fill the SMs.
  s.tokens = c.dim("T") >= 1024 ? 64 : 32;
  s.square_group = 8;
  // The largest power of two up to 128 (64 at 64 tokens, the size measured)
  // that divides the part and whose tiles fit 56 KB of shared memory (four
  // blocks an SM; 128 columns at 2 stages and 32 tokens, dynamic shared
  // memory past 48 KB).
  int64_t chunk = std::min<int64_t>(s.tokens == 64 ? 64 : 128, part & -part);
  while (chunk > 8 && shared_bytes(s.tokens, chunk, s.stages) > 56 * 1024)
    chunk /= 2;
  s.chunk = static_cast<int32_t>(chunk);
  s.vector_bytes = ops::vector_bytes(c, {"residual", "fn"});
  return s;
}

void views(const ops::Call &c, const MhcNormFnSpec &, ops::KernelArgs &args) {
  const int64_t t = c.dim("T"), kd = c.dim("mhc") * c.dim("H");
  args.tensor("residual_rows", token_matrix(c.tensor("residual"), t, kd, kd));
  const rt::TensorView &sq = c.tensor("gemm_out_sqrsum");
  const int64_t shape[3] = {c.integer("n_splits"), t, 1};
  args.tensor("sqrsum_cols",
              rt::TensorView::contiguous(sq.data, sq.dtype, shape));
}

} // namespace

void check_norm_fn_dims(const ops::Call &c) {
  const int64_t kd = c.dim("mhc") * c.dim("H");
  if (c.dim("M3") > 32)
    throw UserError(fmt::format("{}: argument 'fn' has {} rows; requires at "
                                "most 32 (the mixes in one 32-wide tile)",
                                c.op().name, c.dim("M3")));
  if (c.dim("K") != kd)
    throw UserError(fmt::format("{}: argument 'fn' has shape [{}, {}]; "
                                "requires [M3, mhc * H] = [{}, {}]",
                                c.op().name, c.dim("M3"), c.dim("K"),
                                c.dim("M3"), kd));
}

const ops::OpDef &mhc_pre_norm_fn_partials_op() {
  using ops::Layout;
  static const ops::OpDef op = ops::make_op<MhcNormFnSpec>(
      {.name = "mhc_pre_norm_fn_partials",
       .summary = "the split-K partials of mHC's norm product: x . tf32(fn)^T "
                  "and sum x^2 over each of n_splits equal parts of mhc * H",
       .tensors = {ops::input("residual", {DType::bf16}, "T, mhc, H",
                              Layout::contiguous, "the residual streams"),
                   ops::input("fn", {DType::f32}, "M3, K", Layout::contiguous,
                              "the projection (M3, mhc * H), M3 <= 32"),
                   ops::output("gemm_out_mul", {DType::f32}, "S, T, M3"),
                   ops::output("gemm_out_sqrsum", {DType::f32}, "S, T")},
       .params = {ops::integer("n_splits", 16, 1, 1 << 20,
                               "equal parts of mhc * H (S)"),
                  ops::integer("stages", 2, 0, 4,
                               "chunks of x and fn in flight (cp.async, "
                               "k.pipelined); 0: loaded through registers")},
       .dim_rules = stream_rules(),
       .cli_shape = "T, mhc, H",
       .default_shape = {8192, 4, 4096},
       .check = check,
       .dims_from_inputs =
           [](const ops::Call &c) {
             return std::vector<std::pair<std::string, int64_t>>{
                 {"S", c.integer("n_splits")}};
           },
       .derived_dims =
           [](const ops::ShapeArgs &a) {
             const int64_t mhc = a.dim("mhc");
             return std::vector<std::pair<std::string, int64_t>>{
                 {"M3", mhc * (mhc + 2)},
                 {"K", mhc * a.dim("H")},
                 {"S", a.integer("n_splits")}};
           },
       .reference =
           [](const ops::HostCall &c) {
             MhcNormFnPartials p = mhc_pre_norm_fn_partials_ref(
                 c.tensor("residual"), c.tensor("fn"),
                 static_cast<int>(c.integer("n_splits")));
             return std::vector{p.mul, p.sq};
           }},
      {spec, mhc_pre_norm_fn_partials_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(mhc_pre_norm_fn_partials_op);

} // namespace tilejit::mhc
