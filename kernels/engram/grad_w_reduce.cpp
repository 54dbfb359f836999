// grad_w_reduce.cpp - grad_w_reduce declared: the per-block partial
// gradients of the fused Engram weight f32 (B, hc, D) summed (gw), and gw
// * weight_embed, gw * weight_hidden (bf16 (hc, D)) added into the f32
// gradients of weight_hidden and weight_embed, in place when the outputs
// are the buffers.
#include "engram/grad_w_reduce.h"
#include "engram/reference.h"

#include "op/op.h"

#include <initializer_list>

namespace tilejit::engram {

namespace {

GradWReduceSpec spec(const ops::Call &c) {
  GradWReduceSpec s;
  s.partials = static_cast<int32_t>(c.dim("B"));
  // As many loads in flight as divide a group's rows, up to 12 (132 rows:
  // 33 a group, 11 a step).
  s.unroll = ops::unroll_dividing(c.dim("B") / 4);
  s.vector_bytes =
      ops::vector_bytes(c, {"grad_w_partial", "weight_hidden", "weight_embed",
                            "grad_weight_hidden", "grad_weight_embed",
                            "grad_weight_hidden_out", "grad_weight_embed_out"});
  return s;
}

/// A contiguous (hc, D) tensor as its one (1, hc * D) row.
rt::TensorView flat_row(const rt::TensorView &t, int64_t n) {
  const int64_t shape[2] = {1, n}, strides[2] = {n, 1};
  return rt::TensorView::strided(t.data, t.dtype, shape, strides);
}

void views(const ops::Call &c, const GradWReduceSpec &, ops::KernelArgs &args) {
  const int64_t n = c.dim("hc") * c.dim("D"), rows = c.dim("B") / 4;
  const int64_t shape[3] = {4, rows, n}, strides[3] = {rows * n, n, 1};
  const rt::TensorView &p = c.tensor("grad_w_partial");
  args.tensor("partial_groups",
              rt::TensorView::strided(p.data, p.dtype, shape, strides));
  for (const char *name :
       {"weight_hidden", "weight_embed", "grad_weight_hidden",
        "grad_weight_embed", "grad_weight_hidden_out", "grad_weight_embed_out"})
    args.tensor(name, flat_row(c.tensor(name), n));
}

ops::TensorDecl grad(const char *name, bool output, const char *doc) {
  return output ? ops::output(name, {DType::f32}, "hc, D",
                              ops::Layout::contiguous, doc)
                : ops::input(name, {DType::f32}, "hc, D",
                             ops::Layout::contiguous, doc);
}

} // namespace

const ops::OpDef &grad_w_reduce_op() {
  using ops::Layout;
  static const ops::OpDef op =
      ops::make_op<GradWReduceSpec>(
          {.name = "grad_w_reduce",
           .summary =
               "the Engram gate's partial weight gradients summed (gw) "
               "and gw * weight_embed, gw * weight_hidden added into the "
               "gradients of weight_hidden and weight_embed",
           .tensors = {ops::input("grad_w_partial", {DType::f32}, "B, hc, D",
                                  Layout::contiguous, "a row per block"),
                       ops::input("weight_hidden", {DType::bf16}, "hc, D",
                                  Layout::contiguous),
                       ops::input("weight_embed", {DType::bf16}, "hc, D",
                                  Layout::contiguous),
                       grad("grad_weight_hidden", false, "the gradient so far"),
                       grad("grad_weight_embed", false, "the gradient so far"),
                       grad("grad_weight_hidden_out", true,
                            "may be grad_weight_hidden"),
                       grad("grad_weight_embed_out", true,
                            "may be grad_weight_embed")},
           .dim_rules = {{.dim = "B", .multiple = 4},
                         {.dim = "D", .multiple = 512}},
           .cli_shape = "B, hc, D",
           .default_shape = {132, 4, 7168},
           .reference =
               [](const ops::HostCall &c) {
                 HostTensor gwh = c.tensor("grad_weight_hidden").clone();
                 HostTensor gwe = c.tensor("grad_weight_embed").clone();
                 grad_w_reduce_ref(c.tensor("grad_w_partial"),
                                   c.tensor("weight_hidden"),
                                   c.tensor("weight_embed"), gwh, gwe);
                 return std::vector{gwh, gwe};
               }},
          {spec, grad_w_reduce_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(grad_w_reduce_op);

} // namespace tilejit::engram
