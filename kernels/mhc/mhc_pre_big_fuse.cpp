// mhc_pre_big_fuse.cpp - mhc_pre_big_fuse_fwd declared (TileKernels 2.1,
// tk21_ops.md §6.4: the GEMM moved out): from the split-K partials of x .
// fn^T and of x^2, each token's post mix, its Sinkhorn-normalised comb mix
// and its layer input (the pre mix applied to the residual streams), in
// two kernels with the pre mix in a scratch (T, mhc, 1) between them.
#include "mhc/mhc_pre_big_fuse.h"
#include "mhc/mhc_stream.h"
#include "mhc/reference.h"

#include "op/op.h"

#include <bit>

namespace tilejit::mhc {

namespace {

void check(const ops::Call &c) {
  const int64_t mhc = c.dim("mhc");
  if (!std::has_single_bit(static_cast<uint64_t>(mhc)))
    throw UserError(fmt::format("mhc_pre_big_fuse_fwd: argument 'residual' "
                                "has {} streams; requires a power of two "
                                "(the comb mix's Sinkhorn)",
                                mhc));
  if (c.integer("n_splits") != c.dim("S"))
    throw UserError(fmt::format(
        "mhc_pre_big_fuse_fwd: argument 'n_splits' is {}; requires the "
        "splits of 'gemm_out_mul' ({})",
        c.integer("n_splits"), c.dim("S")));
}

MhcBigFuseSpec spec(const ops::Call &c) {
  const MhcStreamSpec apply =
      stream_spec(c, c.dim("mhc"), {"residual", "layer_input"});
  MhcBigFuseSpec s;
  s.mhc = apply.mhc;
  // sinkhorn_normalize's 1024 elements a block of 128 threads.
  s.block_t =
      static_cast<int32_t>(std::max<int64_t>(1, 1024 / (s.mhc * s.mhc)));
  s.repeat = static_cast<int32_t>(c.integer("sinkhorn_repeat"));
  s.eps_bits =
      std::bit_cast<uint32_t>(static_cast<float>(c.real("mhc_sinkhorn_eps")));
  s.chunk = apply.chunk;
  s.apply_threads = apply.threads;
  s.vector_bytes = apply.vector_bytes;
  return s;
}

void views(const ops::Call &c, const MhcBigFuseSpec &s, ops::KernelArgs &args) {
  const int64_t t = c.dim("T"), h = c.dim("H"), splits = c.dim("S");
  const int64_t mhc = s.mhc, mhc3 = mhc * (mhc + 2);
  const auto n3 =
      static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(mhc3)));
  const rt::TensorView &sq = c.tensor("gemm_out_sqrsum");
  const int64_t sq_shape[3] = {splits, t, n3}, sq_strides[3] = {t, 1, 0};
  args.tensor("sqrsum_rows",
              rt::TensorView::strided(sq.data, sq.dtype, sq_shape, sq_strides));
  args.tensor("mhc_base_rows", token_matrix(c.tensor("mhc_base"), t, mhc3, 0));
  args.tensor("comb_mix_rows", token_rows(c.tensor("comb_mix"), 1, mhc, mhc));
  args.tensor("layer_input_rows", token_rows(c.tensor("layer_input"), 1, 1, h));
  args.scalar("rms_group_size", static_cast<double>(mhc * h));
}

ops::TensorShape scratch(const ops::Call &c, const MhcBigFuseSpec &s) {
  return {DType::f32, {c.dim("T"), s.mhc, 1}, {}};
}

} // namespace

const ops::OpDef &mhc_pre_big_fuse_fwd_op() {
  using ops::Layout;
  auto f32 = [](const char *name, const char *shape, const char *doc = "") {
    return ops::input(name, {DType::f32}, shape, Layout::contiguous, doc);
  };
  static const ops::OpDef op = ops::make_op<MhcBigFuseSpec>(
      {.name = "mhc_pre_big_fuse_fwd",
       .summary = "mHC's pre step from the GEMM's split-K partials: the "
                  "post mix, the Sinkhorn-normalised comb mix and the layer "
                  "input of each token",
       .tensors = {f32("gemm_out_mul", "S, T, M3",
                       "split-K partials of x . fn^T"),
                   f32("gemm_out_sqrsum", "S, T",
                       "split-K partials of sum x^2"),
                   f32("mhc_scale", "3"), f32("mhc_base", "M3"),
                   ops::input("residual", {DType::bf16}, "T, mhc, H",
                              Layout::contiguous, "the residual streams"),
                   ops::output("post_mix", {DType::f32}, "T, mhc"),
                   ops::output("comb_mix", {DType::f32}, "T, M2",
                               Layout::contiguous, "after Sinkhorn"),
                   ops::output("layer_input", {DType::bf16}, "T, H")},
       .params = {ops::real("rms_eps", 1e-6, 0.0, "the norm's eps"),
                  ops::real("mhc_pre_eps", 1e-6, "added to the pre mix"),
                  ops::real("mhc_sinkhorn_eps", 1e-6, 0.0,
                            "added to every Sinkhorn sum"),
                  ops::real("mhc_post_mult_value", 1.0, "scales the post mix"),
                  ops::integer("sinkhorn_repeat", 10, 1, 100,
                               "Sinkhorn's normalisation rounds"),
                  ops::integer("n_splits", 16, 1, 1 << 20,
                               "the partials' splits (S)")},
       .dim_rules = {{.dim = "mhc", .min = 1, .max = 16},
                     {.dim = "H", .min = 1}},
       .cli_shape = "S, T, mhc, H",
       .default_shape = {16, 8192, 4, 4096},
       .check = check,
       .dims_from_inputs =
           [](const ops::Call &c) {
             return std::vector<std::pair<std::string, int64_t>>{
                 {"M2", c.dim("mhc") * c.dim("mhc")}};
           },
       .derived_dims =
           [](const ops::ShapeArgs &a) {
             const int64_t mhc = a.dim("mhc");
             return std::vector<std::pair<std::string, int64_t>>{
                 {"M3", mhc * (mhc + 2)}, {"M2", mhc * mhc}};
           },
       .reference =
           [](const ops::HostCall &c) {
             MhcBigFuseResult r = mhc_pre_big_fuse_fwd_ref(
                 c.tensor("gemm_out_mul"), c.tensor("gemm_out_sqrsum"),
                 c.tensor("mhc_scale"), c.tensor("mhc_base"),
                 c.tensor("residual"), static_cast<float>(c.real("rms_eps")),
                 static_cast<float>(c.real("mhc_pre_eps")),
                 static_cast<float>(c.real("mhc_sinkhorn_eps")),
                 static_cast<float>(c.real("mhc_post_mult_value")),
                 static_cast<int>(c.integer("sinkhorn_repeat")));
             return std::vector{r.post_mix, r.comb_mix, r.layer_input};
           }},
      {spec,
       mhc_pre_big_fuse_mix_kernel,
       views,
       {mhc_pre_big_fuse_apply_kernel},
       scratch});
  return op;
}
TILEJIT_REGISTER_OP(mhc_pre_big_fuse_fwd_op);

} // namespace tilejit::mhc
