// mhc_reduce_partials.cpp - mhc_reduce_partials_and_rmsnorm_fwd and _bwd
// declared (TileKernels 2.1's norm half of mhc_pre_norm_fn, fed by a
// split-K gemm): the splits (S, T, G, N3) and (S, T, G) added in order,
// and out = the sum over the G groups of out_mul * rsqrt(sqrsum /
// rms_group_size + rms_eps); the backward's out_mul_grad and sqrsum_grad.
#include "mhc/mhc_reduce_partials.h"
#include "mhc/reference.h"

#include "op/op.h"

#include <algorithm>
#include <bit>

namespace tilejit::mhc {

namespace {

using ops::Layout;

MhcReducePartialsSpec spec(const ops::Call &c) {
  MhcReducePartialsSpec s;
  s.groups = static_cast<int32_t>(c.dim("G"));
  s.mixes = static_cast<int32_t>(c.dim("N3"));
  // 4 mixes a thread, 32 tokens a block (TileKernels: a warp a token).
  const int64_t n3 = std::bit_ceil(static_cast<uint32_t>(s.mixes));
  s.threads = static_cast<int32_t>(std::clamp<int64_t>(32 * n3 / 4, 32, 1024));
  return s;
}

/// `t` with one more dimension of `size` and stride 0 after its own (each
/// value repeated along it).
rt::TensorView repeated(const rt::TensorView &t, int64_t size) {
  rt::TensorView v = t;
  v.shape[static_cast<size_t>(v.rank)] = size;
  v.strides[static_cast<size_t>(v.rank)] = 0;
  ++v.rank;
  return v;
}

ops::TensorDecl in(const char *name, const char *shape) {
  return ops::input(name, {DType::f32}, shape, Layout::contiguous);
}

ops::TensorDecl out(const char *name, const char *shape) {
  return ops::output(name, {DType::f32}, shape, Layout::contiguous);
}

const std::vector<ops::ParamDecl> kParams = {
    ops::integer("rms_group_size", 16384, 1, int64_t{1} << 40,
                 "the K elements of an RMS group (mhc * H at G = 1)"),
    ops::real("rms_eps", 1e-6, 0.0, "inside the rsqrt")};

} // namespace

const ops::OpDef &mhc_reduce_partials_and_rmsnorm_fwd_op() {
  static const ops::OpDef op = ops::make_op<MhcReducePartialsSpec>(
      {.name = "mhc_reduce_partials_and_rmsnorm_fwd",
       .summary = "a split-K gemm's partials added in split order and "
                  "RMS-normalised per group: out = sum over groups of "
                  "out_mul * rsqrt(sqrsum / rms_group_size + rms_eps)",
       .tensors = {in("out_mul_splitted", "S, T, G, N3"),
                   in("sqrsum_splitted", "S, T, G"), out("out_mul", "T, G, N3"),
                   out("sqrsum", "T, G"), out("out", "T, N3")},
       .params = kParams,
       .dim_rules = {{.dim = "N3", .min = 1, .max = 1024},
                     {.dim = "G", .min = 1, .max = 64}},
       .cli_shape = "S, T, G, N3",
       .default_shape = {16, 8192, 1, 24},
       .reference =
           [](const ops::HostCall &c) {
             MhcReducePartialsResult r =
                 mhc_reduce_partials_and_rmsnorm_fwd_ref(
                     c.tensor("out_mul_splitted"), c.tensor("sqrsum_splitted"),
                     c.integer("rms_group_size"),
                     static_cast<float>(c.real("rms_eps")));
             return std::vector{r.out_mul, r.sqrsum, r.out};
           }},
      {spec, mhc_reduce_partials_fwd_kernel,
       [](const ops::Call &c, const MhcReducePartialsSpec &,
          ops::KernelArgs &args) {
         const int64_t n3 = c.dim("N3");
         args.tensor("sqrsum_splitted_rows",
                     repeated(c.tensor("sqrsum_splitted"), n3));
         args.tensor("sqrsum_rows", repeated(c.tensor("sqrsum"), n3));
       }});
  return op;
}
TILEJIT_REGISTER_OP(mhc_reduce_partials_and_rmsnorm_fwd_op);

const ops::OpDef &mhc_reduce_partials_and_rmsnorm_bwd_op() {
  static const ops::OpDef op = ops::make_op<MhcReducePartialsSpec>(
      {.name = "mhc_reduce_partials_and_rmsnorm_bwd",
       .summary = "the norm's gradients: out_mul_grad = out_grad * r, "
                  "sqrsum_grad = (out_grad . out_mul) r / (sqrsum + C) / -2",
       .tensors = {in("out_grad", "T, N3"), in("out_mul", "T, G, N3"),
                   in("sqrsum", "T, G"), out("out_mul_grad", "T, G, N3"),
                   out("sqrsum_grad", "T, G")},
       .params = kParams,
       .dim_rules = {{.dim = "N3", .min = 1, .max = 1024},
                     {.dim = "G", .min = 1, .max = 64}},
       .cli_shape = "T, G, N3",
       .default_shape = {8192, 1, 24},
       .reference =
           [](const ops::HostCall &c) {
             MhcReducePartialsGrads g = mhc_reduce_partials_and_rmsnorm_bwd_ref(
                 c.tensor("out_grad"), c.tensor("out_mul"), c.tensor("sqrsum"),
                 c.integer("rms_group_size"),
                 static_cast<float>(c.real("rms_eps")));
             return std::vector{g.out_mul_grad, g.sqrsum_grad};
           }},
      {spec, mhc_reduce_partials_bwd_kernel,
       [](const ops::Call &c, const MhcReducePartialsSpec &,
          ops::KernelArgs &args) {
         const int64_t tokens = c.dim("T"), groups = c.dim("G"),
                       n3 = c.dim("N3");
         const rt::TensorView &g = c.tensor("out_grad");
         const int64_t shape[3] = {tokens, groups, n3},
                       strides[3] = {g.strides[0], 0, 1};
         args.tensor("out_grad_rows",
                     rt::TensorView::strided(g.data, g.dtype, shape, strides));
         args.tensor("sqrsum_rows", repeated(c.tensor("sqrsum"), n3));
         args.tensor("sqrsum_grad_rows", repeated(c.tensor("sqrsum_grad"), 1));
         // C = rms_eps * rms_group_size in double, then f32.
         args.scalar("eps_times_group_size",
                     c.real("rms_eps") *
                         static_cast<double>(c.integer("rms_group_size")));
       }});
  return op;
}
TILEJIT_REGISTER_OP(mhc_reduce_partials_and_rmsnorm_bwd_op);

} // namespace tilejit::mhc
