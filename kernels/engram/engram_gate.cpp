// engram_gate.cpp - engram_gate_fwd declared: bf16 hidden_states x and k
// (T, hc, D), v (T, D) shared by the heads, the f32 fused weight (hc, D);
// out = bf16(x + g * v) per (token, head), and (save_for_backward: the
// outputs passed) the raw dot, the gate and both rstds. TileKernels 2.1's
// kv (T, hc + 1, D) is k = kv[:, :hc] and v = kv[:, hc] (views), its
// image_token_mask keeps an image token's x.
#include "engram/engram_gate.h"
#include "engram/reference.h"

#include "op/op.h"

#include <bit>

namespace tilejit::engram {

namespace {

constexpr const char *kSaved[] = {"dot", "gate_score", "rstd_x", "rstd_k"};

void check(const ops::Call &c) {
  int passed = 0;
  for (const char *name : kSaved)
    passed += c.has(name) ? 1 : 0;
  if (passed != 0 && passed != 4)
    throw UserError(
        "engram_gate_fwd: some of 'dot', 'gate_score', 'rstd_x' and "
        "'rstd_k' are passed; requires all four (save_for_backward) or none");
}

EngramGateFwdSpec spec(const ops::Call &c) {
  EngramGateFwdSpec s;
  s.heads = static_cast<int32_t>(c.dim("hc"));
  s.hidden = static_cast<int32_t>(c.dim("D"));
  s.save = c.has("dot") ? 1 : 0;
  s.image = c.has("image_token_mask") ? 1 : 0;
  // The largest power of two up to 1024 that divides D (D % 256 == 0),
  // and 8 elements a thread (16-byte bf16 vectors): 512 threads at hc 4.
  s.chunk = 1024;
  while (s.hidden % s.chunk != 0)
    s.chunk /= 2;
  const int64_t heads = std::bit_ceil(static_cast<uint32_t>(s.heads));
  s.threads =
      static_cast<int32_t>(std::clamp<int64_t>(heads * s.chunk / 8, 32, 1024));
  s.vector_bytes =
      ops::vector_bytes(c, {"hidden_states", "k", "v", "weight_fused", "out"});
  return s;
}

void views(const ops::Call &c, const EngramGateFwdSpec &,
           ops::KernelArgs &args) {
  const int64_t tokens = c.dim("T"), hc = c.dim("hc"), d = c.dim("D");
  const int64_t shape[3] = {tokens, hc, d};
  const rt::TensorView &v = c.tensor("v");
  const int64_t v_strides[3] = {v.strides[0], 0, 1};
  args.tensor("v_rows",
              rt::TensorView::strided(v.data, v.dtype, shape, v_strides));
  const rt::TensorView &w = c.tensor("weight_fused");
  const int64_t w_strides[3] = {0, d, 1};
  args.tensor("weight_rows",
              rt::TensorView::strided(w.data, w.dtype, shape, w_strides));
  const int64_t saved_shape[3] = {tokens, hc, 1}, dense[3] = {hc, 1, 1};
  for (const char *name : kSaved)
    if (c.has(name))
      args.tensor(name, rt::TensorView::strided(c.tensor(name).data, DType::f32,
                                                saved_shape, dense));
}

ops::TensorDecl saved(const char *name, const char *doc) {
  return ops::optional_output(name, {DType::f32}, "T, hc",
                              ops::Layout::contiguous, doc);
}

} // namespace

const ops::OpDef &engram_gate_fwd_op() {
  using ops::Layout;
  static const ops::OpDef op = ops::make_op<EngramGateFwdSpec>(
      {.name = "engram_gate_fwd",
       .summary = "the Engram gate: x + sigmoid(signed sqrt of the "
                  "RMS-normalised, weighted x.k / sqrt(D)) * v per token and "
                  "head",
       .tensors =
           {ops::input("hidden_states", {DType::bf16}, "T, hc, D",
                       Layout::contiguous),
            ops::input("k", {DType::bf16}, "T, hc, D", Layout::inner_contiguous,
                       "2.1: kv[:, :hc]"),
            ops::input("v", {DType::bf16}, "T, D", Layout::inner_contiguous,
                       "shared by the heads; 2.1: kv[:, hc]"),
            ops::input("weight_fused", {DType::f32}, "hc, D",
                       Layout::contiguous, "weight_hidden * weight_embed"),
            ops::absent_by_default(ops::optional_input(
                "image_token_mask", {DType::boolean}, "T", Layout::contiguous,
                "2.1: true: an image token, out = x")),
            ops::output("out", {DType::bf16}, "T, hc, D", Layout::contiguous,
                        "may be hidden_states (2.1's inplace)"),
            saved("dot", "the raw sum of x * w * k"), saved("gate_score", "g"),
            saved("rstd_x", "1 / rms(x)"), saved("rstd_k", "1 / rms(k)")},
       .params = {ops::real("eps", 1e-20, 0.0, "inside the rstds' sqrt"),
                  ops::real("clamp_value", 1e-6, 0.0,
                            "the least |z| under the signed sqrt")},
       .dim_rules = {{.dim = "D", .min = 256, .multiple = 256}},
       .cli_shape = "T, hc, D",
       .default_shape = {8001, 4, 7168},
       .check = check,
       .reference =
           [](const ops::HostCall &c) {
             const bool save = c.has("dot");
             EngramGateFwdResult r = engram_gate_fwd_ref(
                 c.tensor("hidden_states"), c.tensor("k"), c.tensor("v"),
                 c.tensor("weight_fused"), static_cast<float>(c.real("eps")),
                 static_cast<float>(c.real("clamp_value")), save,
                 c.given("image_token_mask"));
             if (!save)
               return std::vector<HostTensor>{r.out, {}, {}, {}, {}};
             return std::vector{r.out, *r.dot, *r.gate_score, *r.rstd_x,
                                *r.rstd_k};
           }},
      {spec, engram_gate_fwd_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(engram_gate_fwd_op);

} // namespace tilejit::engram
