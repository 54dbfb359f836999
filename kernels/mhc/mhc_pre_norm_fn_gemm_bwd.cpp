// mhc_pre_norm_fn_gemm_bwd.cpp - mhc_pre_norm_fn_gemm_bwd declared
// (tilejit's op: the GEMM half of mHC's norm backward, which TileKernels 2.1
// leaves to an external GEMM after mhc_reduce_partials_and_rmsnorm_bwd):
// from out_mul_grad (T, mhc3) and sqrsum_grad (T,), x_grad_out = x_grad (or
// 0) + tf32(out_mul_grad) . tf32(fn) + 2 x sqrsum_grad in bf16 (may be
// x_grad, in place) and fn_grad = tf32(out_mul_grad)^T . x (written).
#include "mhc/mhc_pre_norm_fn_gemm_bwd.h"
#include "mhc/mhc_pre_norm_fn_partials.h"
#include "mhc/mhc_stream.h"
#include "mhc/reference.h"

#include "op/op.h"

#include <algorithm>
#include <bit>

namespace tilejit::mhc {

namespace {

MhcNormFnBwdSpec spec(const ops::Call &c) {
  MhcNormFnBwdSpec s;
  s.accumulate = c.has("x_grad") ? 1 : 0;
  s.vector_bytes =
      ops::vector_bytes(c, {"residual", "fn", "x_grad", "x_grad_out"});
  s.stages = static_cast<int32_t>(c.integer("stages"));
  if (ops::rows_aligned(c.tensor("out_mul_grad"), 16))
    s.mul_grad_bytes = 16;
  // fn_grad's token steps (64 tokens each) in parts of at least 16 steps,
  // up to 8: 448 blocks of 64 columns at H = 7168 take 128 steps each
  // otherwise, too few warps in flight for the loads.
  const int64_t steps = (c.dim("T") + 63) / 64;
  s.fn_splits = static_cast<int32_t>(std::bit_floor(
      static_cast<uint64_t>(std::clamp<int64_t>(steps / 16, 1, 8))));
  s.fn_grad_bytes = ops::vector_bytes(c, {"fn_grad"});
  return s;
}

/// fn_grad's partial sums, a (32, Kd) slice a part.
ops::TensorShape scratch(const ops::Call &c, const MhcNormFnBwdSpec &s) {
  const int64_t kd = c.dim("mhc") * c.dim("H");
  return {DType::f32, {s.fn_splits, 32, kd}, {32 * kd, kd, 1}};
}

/// The residuals and gradients as (T, Kd) rows; sqrsum_grad as (T, Kd) of
/// column stride 0.
void views(const ops::Call &c, const MhcNormFnBwdSpec &,
           ops::KernelArgs &args) {
  const int64_t t = c.dim("T"), kd = c.dim("mhc") * c.dim("H");
  args.tensor("residual_rows", token_matrix(c.tensor("residual"), t, kd, kd));
  if (c.has("x_grad"))
    args.tensor("x_grad_rows", token_matrix(c.tensor("x_grad"), t, kd, kd));
  args.tensor("x_grad_out_rows",
              token_matrix(c.tensor("x_grad_out"), t, kd, kd));
  const rt::TensorView &sq = c.tensor("sqrsum_grad");
  const int64_t shape[2] = {t, kd}, strides[2] = {1, 0};
  args.tensor("sqrsum_grad_rows",
              rt::TensorView::strided(sq.data, sq.dtype, shape, strides));
}

} // namespace

const ops::OpDef &mhc_pre_norm_fn_gemm_bwd_op() {
  using ops::Layout;
  auto f32 = [](const char *name, const char *shape, const char *doc) {
    return ops::input(name, {DType::f32}, shape, Layout::contiguous, doc);
  };
  static const ops::OpDef op = ops::make_op<MhcNormFnBwdSpec>(
      {.name = "mhc_pre_norm_fn_gemm_bwd",
       .summary = "the GEMM half of mHC's norm backward: the residual's "
                  "gradient (added to) and fn's, from the norm's gradients",
       .tensors = {f32("out_mul_grad", "T, M3",
                       "mhc_reduce_partials_and_rmsnorm_bwd's"),
                   f32("sqrsum_grad", "T",
                       "mhc_reduce_partials_and_rmsnorm_bwd's"),
                   ops::input("residual", {DType::bf16}, "T, mhc, H",
                              Layout::contiguous, "the forward's x"),
                   f32("fn", "M3, K",
                       "the forward's projection (mhc3, mhc * H)"),
                   ops::optional(ops::input("x_grad", {DType::bf16},
                                            "T, mhc, H", Layout::contiguous,
                                            "the residual's gradient so far"),
                                 true),
                   ops::output("x_grad_out", {DType::bf16}, "T, mhc, H",
                               Layout::contiguous, "may be x_grad"),
                   ops::output("fn_grad", {DType::f32}, "M3, K",
                               Layout::contiguous, "written, not added to")},
       .params = {ops::integer(
           "stages", 2, 0, 3,
           "fn_grad's token chunks of out_mul_grad and x in flight "
           "(cp.async, k.pipelined), multiplied as they lie (mma.sync on "
           "transposed operands); 0: transposed through registers (1.26x "
           "the time of 2 at 8192x4x7168 on an H100)")},
       .dim_rules = stream_rules(),
       .cli_shape = "T, mhc, H",
       .default_shape = {8192, 4, 4096},
       .check = check_norm_fn_dims,
       .derived_dims =
           [](const ops::ShapeArgs &a) {
             const int64_t mhc = a.dim("mhc");
             return std::vector<std::pair<std::string, int64_t>>{
                 {"M3", mhc * (mhc + 2)}, {"K", mhc * a.dim("H")}};
           },
       .reference =
           [](const ops::HostCall &c) {
             const ref::HostTensor &x = c.tensor("residual");
             const int64_t rows[] = {x.size(0), x.size(1) * x.size(2)};
             std::optional<ref::HostTensor> x_grad;
             if (c.has("x_grad"))
               x_grad = c.tensor("x_grad").reinterpret(DType::bf16, rows);
             MhcNormFnGemmGrads g = mhc_pre_norm_fn_gemm_bwd_ref(
                 c.tensor("out_mul_grad"), c.tensor("sqrsum_grad"),
                 x.reinterpret(DType::bf16, rows), c.tensor("fn"), x_grad);
             return std::vector{g.x_grad.reinterpret(DType::bf16, x.shape()),
                                g.fn_grad};
           }},
      {spec,
       mhc_pre_norm_fn_x_grad_kernel,
       views,
       {mhc_pre_norm_fn_fn_grad_kernel, mhc_pre_norm_fn_fn_grad_sum_kernel},
       scratch});
  return op;
}
TILEJIT_REGISTER_OP(mhc_pre_norm_fn_gemm_bwd_op);

} // namespace tilejit::mhc
