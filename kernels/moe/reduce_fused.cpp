// reduce_fused.cpp - reduce_fused declared: fused rows x (N, H) summed back
// to tokens (T, H) through token_topk_to_pos (T, K), weighted, in f32; a
// block a token and block_h columns.
#include "moe/reduce_fused.h"
#include "moe/reference.h"

#include "op/op.h"
#include <algorithm>

namespace tilejit::moe {

static ReduceFusedSpec spec(const ops::Call &c) {
  ReduceFusedSpec s;
  s.in_dtype = c.tensor("x").dtype;
  s.out_dtype = c.tensor("out").dtype;
  s.topk = static_cast<int32_t>(c.dim("K"));
  const int64_t h = c.dim("H");
  s.block_h = h % 1024 == 0 ? 1024 : h % 512 == 0 ? 512 : 256;
  // 64 bytes of each slot's row a thread (four 16-byte chunks): with every
  // slot's row in flight at once, what keeps the H200 at its copy
  // bandwidth (TileKernels' benchmark shape, bf16: 16, 32 and 64 bytes a
  // thread read 54%, 90% and 99.7% of a copy's).
  s.threads = std::max<int32_t>(
      32, s.block_h / static_cast<int32_t>(64 / size_of(s.in_dtype)));
  s.weights = c.has("topk_weights");
  s.x_sf = c.has("x_sf");
  s.sf = c.has("sf");
  s.vector_bytes = ops::vector_bytes(c, {"x", "out"});
  return s;
}

static void check(const ops::Call &c) {
  const std::string_view op = c.op().name;
  const DType x = c.tensor("x").dtype, out = c.tensor("out").dtype;
  if (out != x && out != DType::e4m3)
    throw UserError(fmt::format("{}: argument 'out' has dtype {} and x {}; "
                                "requires x's dtype, or e4m3 (fp8_format "
                                "'e4m3')",
                                op, name_of(out), name_of(x)));
  if (c.has("sf") && out != DType::e4m3)
    throw UserError(fmt::format("{}: argument 'sf' is passed with an out of "
                                "{}; requires an e4m3 out (sf scales the "
                                "fp8 output only)",
                                op, name_of(out)));
}

/// The kernel's views: token_topk_to_pos and topk_weights flattened to
/// (T * K,) (the gather's row indices, the slots' weights).
static void views(const ops::Call &c, const ReduceFusedSpec &,
                  ops::KernelArgs &args) {
  args.flat("positions", c.tensor("token_topk_to_pos"));
  if (c.has("topk_weights"))
    args.flat("weights", c.tensor("topk_weights"));
}

const ops::OpDef &reduce_fused_op() {
  static const ops::OpDef op = ops::make_op<ReduceFusedSpec>(
      {.name = "reduce_fused",
       .summary = "MoE fused rows summed back to tokens: out[t] = sum over "
                  "slots k of x[token_topk_to_pos[t, k]] * weight (* x_sf), "
                  "one f32 fma a slot in order, bf16/f32 or e4m3 out",
       .tensors = {ops::input("x", {DType::bf16, DType::f32}, "N, H",
                              ops::Layout::contiguous),
                   ops::absent_by_default(ops::optional_input(
                       "x_sf", {DType::f32}, "N", ops::Layout::contiguous,
                       "a scale per row of x ((x, x_sf))")),
                   ops::optional_input("topk_weights", {DType::f32}, "T, K",
                                       ops::Layout::contiguous),
                   ops::input("token_topk_to_pos", {DType::i32}, "T, K",
                              ops::Layout::contiguous,
                              "x's row of each slot, -1: "
                              "none"),
                   ops::absent_by_default(ops::optional_input(
                       "sf", {DType::f32}, "1", ops::Layout::contiguous,
                       "the e4m3 output's scale")),
                   ops::output("out", {DType::bf16, DType::f32, DType::e4m3},
                               "T, H", ops::Layout::contiguous,
                               "x's dtype, or e4m3 for fp8_format 'e4m3'")},
       .dim_rules = {{.dim = "H", .min = 256, .multiple = 256},
                     {.dim = "K", .min = 1, .max = 32}},
       .cli_shape = "T, K, N, H",
       .default_shape = {4096, 6, 8192, 7168},
       .check = check,
       .reference =
           [](const ops::HostCall &c) {
             std::variant<ref::HostTensor,
                          std::pair<ref::HostTensor, ref::HostTensor>>
                 x = c.tensor("x");
             if (c.has("x_sf"))
               x = std::pair{c.tensor("x"), c.tensor("x_sf")};
             std::optional<ref::HostTensor> w, sf;
             if (c.has("topk_weights"))
               w = c.tensor("topk_weights");
             if (c.has("sf"))
               sf = c.tensor("sf");
             const bool fp8 = c.output("out").dtype == DType::e4m3;
             return std::vector{reduce_fused_ref(
                 x, w, c.tensor("token_topk_to_pos"), fp8 ? "e4m3" : "", sf)};
           }},
      {spec, reduce_fused_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(reduce_fused_op);

void reduce_fused(const rt::TensorView &x, const rt::TensorView &x_sf,
                  const rt::TensorView &topk_weights,
                  const rt::TensorView &token_topk_to_pos,
                  const rt::TensorView &sf, const rt::TensorView &out,
                  CUstream stream) {
  reduce_fused_op().call({x, x_sf, topk_weights, token_topk_to_pos, sf, out},
                         {}, stream);
}

} // namespace tilejit::moe
