// mhc_fn_normw_merge.cpp - mhc_fn_normw_merge_fwd and _bwd declared
// (TileKernels 2.1's raw entry points): out_fn = fn * normw column-wise;
// fn_grad += out_fn_grad * normw (one fma) and normw_grad += the column sums
// of out_fn_grad * fn, in place when the outputs are the buffers.
#include "mhc/mhc_fn_normw_merge.h"
#include "mhc/reference.h"

#include "op/op.h"

#include <bit>

namespace tilejit::mhc {

namespace {

/// The spec of a call whose (R, K) matrices are `matrices`.
MhcNormwSpec spec(const ops::Call &c,
                  std::initializer_list<std::string_view> matrices) {
  MhcNormwSpec s;
  s.rows = static_cast<int32_t>(
      std::bit_ceil(static_cast<uint64_t>(std::max<int64_t>(1, c.dim("R")))));
  // 2048 values a block of 128 threads (16 a thread), 4 columns at least.
  s.block_k = std::max(4, 2048 / s.rows);
  s.vector_bytes = ops::vector_bytes(c, matrices);
  return s;
}

/// normw as (R, K) rows of stride 0; for the backward, the normw_grad
/// buffers as (1, K).
void views(const ops::Call &c, const MhcNormwSpec &, ops::KernelArgs &args) {
  const int64_t k = c.dim("K"), rows[2] = {c.dim("R"), k}, one[2] = {1, k},
                strides[2] = {0, 1}, dense[2] = {k, 1};
  const rt::TensorView &w = c.tensor("normw");
  args.tensor("normw_rows",
              rt::TensorView::strided(w.data, w.dtype, rows, strides));
  if (c.op().tensor_index("normw_grad") < 0)
    return;
  for (const char *name : {"normw_grad", "normw_grad_out"})
    args.tensor(name, rt::TensorView::strided(c.tensor(name).data, DType::f32,
                                              one, dense));
}

ops::TensorDecl matrix(const char *name, bool output = false,
                       const char *doc = "") {
  return output ? ops::output(name, {DType::f32}, "R, K",
                              ops::Layout::contiguous, doc)
                : ops::input(name, {DType::f32}, "R, K",
                             ops::Layout::contiguous, doc);
}

ops::TensorDecl vector(const char *name, bool output = false,
                       const char *doc = "") {
  return output ? ops::output(name, {DType::f32}, "K", ops::Layout::contiguous,
                              doc)
                : ops::input(name, {DType::f32}, "K", ops::Layout::contiguous,
                             doc);
}

} // namespace

const ops::OpDef &mhc_fn_normw_merge_fwd_op() {
  static const ops::OpDef op = ops::make_op<MhcNormwSpec>(
      {.name = "mhc_fn_normw_merge_fwd",
       .summary = "the projection fn (R, K) times the norm weight (K,), "
                  "column-wise",
       .tensors = {matrix("fn"), vector("normw"),
                   matrix("out_fn", true, "fn * normw")},
       .dim_rules = {{.dim = "R", .min = 1, .max = 256}},
       .cli_shape = "R, K",
       .default_shape = {24, 28672},
       .reference =
           [](const ops::HostCall &c) {
             return std::vector{
                 mhc_fn_normw_merge_ref(c.tensor("fn"), c.tensor("normw"))};
           }},
      {[](const ops::Call &c) {
         return spec(c, {"fn", "out_fn"});
       },
       mhc_fn_normw_merge_fwd_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(mhc_fn_normw_merge_fwd_op);

const ops::OpDef &mhc_fn_normw_merge_bwd_op() {
  static const ops::OpDef op = ops::make_op<MhcNormwSpec>(
      {.name = "mhc_fn_normw_merge_bwd",
       .summary = "the merge's gradients added into buffers: fn_grad += "
                  "out_fn_grad * normw, normw_grad += the column sums of "
                  "out_fn_grad * fn",
       .tensors = {matrix("fn"), vector("normw"), matrix("out_fn_grad"),
                   matrix("fn_grad", false, "fn's gradient so far"),
                   vector("normw_grad", false, "normw's gradient so far"),
                   matrix("fn_grad_out", true, "may be fn_grad"),
                   vector("normw_grad_out", true, "may be normw_grad")},
       .dim_rules = {{.dim = "R", .min = 1, .max = 256}},
       .cli_shape = "R, K",
       .default_shape = {24, 28672},
       .reference =
           [](const ops::HostCall &c) {
             MhcFnNormwMergeGrads g = mhc_fn_normw_merge_bwd_ref(
                 c.tensor("out_fn_grad"), c.tensor("fn"), c.tensor("normw"),
                 c.tensor("fn_grad").clone(), c.tensor("normw_grad").clone());
             return std::vector{g.fn_grad, g.norm_weight_grad};
           }},
      {[](const ops::Call &c) {
         return spec(c, {"fn", "out_fn_grad", "fn_grad", "fn_grad_out"});
       },
       mhc_fn_normw_merge_bwd_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(mhc_fn_normw_merge_bwd_op);

} // namespace tilejit::mhc
