// engram_gate.cpp - engram_gate_fwd and _bwd declared: bf16 hidden_states
// x and k (T, hc, D), v (T, D) shared by the heads, the f32 fused weight
// (hc, D). Forward: out = bf16(x + g * v) per (token, head), and
// (save_for_backward: the outputs passed) the raw dot, the gate and both
// rstds. Backward (hc = 4): grad_x, grad_k, grad_v from grad_out and the
// saved values, and num_sms rows of partial weight gradients.
// TileKernels 2.1's kv (T, hc + 1, D) is k = kv[:, :hc] and v = kv[:, hc]
// (views; grad_kv likewise), its image_token_mask keeps an image token's x
// (forward) and grad_out (backward).
#include "engram/engram_gate.h"
#include "engram/reference.h"

#include "op/op.h"

#include <array>
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

/// A token's (hc, chunk) tiles, forward and backward alike: hc, D, the
/// largest power of two up to 1024 (512 at 3 or 4 stages, whose buffers
/// would not fit) that divides D (D % 256 == 0), 8 columns of each head a
/// thread (512 threads at hc 4), 2.1's image tokens, the stages.
template <class Spec> Spec token_tiles(const ops::Call &c) {
  Spec s;
  s.heads = static_cast<int32_t>(c.dim("hc"));
  s.hidden = static_cast<int32_t>(c.dim("D"));
  s.image = c.has("image_token_mask") ? 1 : 0;
  s.stages = static_cast<int32_t>(c.integer("stages"));
  s.chunk = s.stages >= 3 ? 512 : 1024;
  while (s.hidden % s.chunk != 0)
    s.chunk /= 2;
  const int64_t heads = std::bit_ceil(static_cast<uint32_t>(s.heads));
  s.threads =
      static_cast<int32_t>(std::clamp<int64_t>(heads * s.chunk / 8, 32, 1024));
  return s;
}

/// Whether every one of `names` has its heads D apart (as (T, hc D) rows;
/// 2.1's kv views too).
bool heads_d_apart(const ops::Call &c,
                   std::initializer_list<const char *> names) {
  for (const char *name : names)
    if (c.tensor(name).strides[1] != c.dim("D"))
      return false;
  return true;
}

/// The threads of a rows kernel with `columns` columns of every head a
/// thread: the most (at most 1024 / columns) whose chunk divides D (D %
/// 256 == 0).
int32_t row_threads(int32_t hidden, int32_t columns) {
  int32_t threads = 1024 / columns;
  while (hidden % (columns * threads) != 0)
    threads /= 2;
  return threads;
}

EngramGateFwdSpec spec(const ops::Call &c) {
  auto s = token_tiles<EngramGateFwdSpec>(c);
  s.save = c.has("dot") ? 1 : 0;
  // rows: k's heads D apart (x and out are contiguous); 2 columns of every
  // head a thread.
  if (c.choice("layout") == "rows" && heads_d_apart(c, {"k"})) {
    s.rows = 1;
    s.threads = row_threads(s.hidden, 2);
    s.chunk = 2 * s.threads;
    s.stages = 0;
  }
  s.vector_bytes =
      ops::vector_bytes(c, {"hidden_states", "k", "v", "weight_fused", "out"});
  return s;
}

/// Every (T, hc, D) tensor as (T, hc D) rows (head stride D) and the
/// weight (hc, D) as such a row repeated (token stride 0), for the kernels
/// that read rows.
void bind_rows(const ops::Call &c, std::initializer_list<const char *> names,
               ops::KernelArgs &args) {
  const int64_t tokens = c.dim("T"), row = c.dim("hc") * c.dim("D");
  for (const char *name : names) {
    const rt::TensorView &t = c.tensor(name);
    const int64_t shape[2] = {tokens, row}, strides[2] = {t.strides[0], 1};
    args.tensor(name, rt::TensorView::strided(t.data, t.dtype, shape, strides));
  }
  const rt::TensorView &w = c.tensor("weight_fused");
  const int64_t w_shape[2] = {tokens, row}, w_strides[2] = {0, 1};
  args.tensor("weight_rows",
              rt::TensorView::strided(w.data, w.dtype, w_shape, w_strides));
}

void views(const ops::Call &c, const EngramGateFwdSpec &s,
           ops::KernelArgs &args) {
  if (s.rows) {
    bind_rows(c, {"hidden_states", "k", "out"}, args);
    return;
  }
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

/// Both passes' chunks copied ahead (forward and backward alike).
ops::ParamDecl stages_param() {
  return ops::integer("stages", 4, 0, 4,
                      "each pass's chunks in flight (cp.async, k.pipelined; "
                      "at 3 and 4, chunks of 512 columns); 0: loads a chunk "
                      "at a time (H100, 8001x4x7168 forward: 0.675 ms at 0, "
                      "0.655 at 2, 0.571 at 4)");
}

ops::TensorDecl saved(const char *name, const char *doc) {
  return ops::optional_output(name, {DType::f32}, "T, hc",
                              ops::Layout::contiguous, doc);
}

EngramGateBwdSpec bwd_spec(const ops::Call &c) {
  auto s = token_tiles<EngramGateBwdSpec>(c);
  const std::string &grad_w = c.choice("grad_w");
  if (grad_w != "global" && heads_d_apart(c, {"k", "grad_k"})) {
    // registers_N: N columns of every head a thread, while the row fits 32
    // N floats a thread (1024 / N threads have 64 N registers).
    const int32_t columns = grad_w == "registers_2" ? 2 : 4;
    const int32_t threads = row_threads(s.hidden, columns);
    if (int64_t{s.heads} * s.hidden / threads <= 32 * columns) {
      s.registers = columns;
      s.threads = threads;
      s.chunk = columns * threads;
      // The next chunk's loads before this one's stores (H100, 8001x4x7168:
      // 0.974 ms against 1.116 for a chunk at a time and 1.128 for two
      // chunks ahead, which spill).
      s.stages = std::min(s.stages, 1);
    }
  }
  s.vector_bytes = ops::vector_bytes(c, {"grad_out", "hidden_states", "k", "v",
                                         "weight_fused", "grad_x", "grad_k",
                                         "grad_v", "grad_w_partial"});
  return s;
}

void bwd_views(const ops::Call &c, const EngramGateBwdSpec &s,
               ops::KernelArgs &args) {
  const int64_t tokens = c.dim("T"), hc = c.dim("hc"), d = c.dim("D");
  if (s.registers) {
    // grad_w_partial as (B, hc D) too.
    bind_rows(c, {"grad_out", "hidden_states", "k", "grad_x", "grad_k"}, args);
    const rt::TensorView &gw = c.tensor("grad_w_partial");
    const int64_t gw_shape[2] = {gw.shape[0], hc * d},
                  gw_strides[2] = {hc * d, 1};
    args.tensor("grad_w_partial", rt::TensorView::strided(
                                      gw.data, gw.dtype, gw_shape, gw_strides));
    return;
  }
  const int64_t shape[3] = {tokens, hc, d};
  auto view = [&](const char *name, std::array<int64_t, 3> strides) {
    const rt::TensorView &t = c.tensor(name);
    return rt::TensorView::strided(t.data, t.dtype, shape, strides);
  };
  // v (T, D) read by every head; the weight (hc, D) by every token.
  args.tensor("v_rows", view("v", {c.tensor("v").strides[0], 0, 1}));
  args.tensor("weight_rows", view("weight_fused", {0, d, 1}));
  // grad_v (T, D) as (T, 1, D).
  const rt::TensorView &gv = c.tensor("grad_v");
  const int64_t gv_shape[3] = {tokens, 1, d},
                gv_strides[3] = {gv.strides[0], d, 1};
  args.tensor("grad_v_rows",
              rt::TensorView::strided(gv.data, gv.dtype, gv_shape, gv_strides));
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
                            "the least |z| under the signed sqrt"),
                  stages_param(),
                  ops::choice(
                      "layout", "chunks", {"chunks", "rows"},
                      "chunks: (hc, chunk) tiles, 8 columns of a head a "
                      "thread, `stages` as given; rows: (T, hc D) rows, 2 "
                      "columns of every head a thread, the output pass's "
                      "loads unrolled (where k's heads are D apart; "
                      "`stages` unused; not yet measured)")},
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

const ops::OpDef &engram_gate_bwd_op() {
  using ops::Layout;
  auto bf16_rows = [](const char *name, Layout layout, const char *doc) {
    return ops::input(name, {DType::bf16}, "T, hc, D", layout, doc);
  };
  auto saved_in = [](const char *name) {
    return ops::input(name, {DType::f32}, "T, hc", Layout::contiguous,
                      "saved by engram_gate_fwd");
  };
  static const ops::OpDef op = ops::make_op<EngramGateBwdSpec>(
      {.name = "engram_gate_bwd",
       .summary = "the Engram gate's gradients: grad_x, grad_k, grad_v and "
                  "each persistent block's partial sum of the fused "
                  "weight's gradient",
       .tensors =
           {bf16_rows("grad_out", Layout::contiguous, ""),
            bf16_rows("hidden_states", Layout::contiguous, ""),
            bf16_rows("k", Layout::inner_contiguous, "2.1: kv[:, :hc]"),
            ops::input("v", {DType::bf16}, "T, D", Layout::inner_contiguous,
                       "2.1: kv[:, hc]"),
            ops::input("weight_fused", {DType::f32}, "hc, D",
                       Layout::contiguous),
            saved_in("dot"), saved_in("gate_score"), saved_in("rstd_x"),
            saved_in("rstd_k"),
            ops::absent_by_default(ops::optional_input(
                "image_token_mask", {DType::boolean}, "T", Layout::contiguous,
                "2.1: true: grad_x = grad_out, no other gradient")),
            ops::output("grad_x", {DType::bf16}, "T, hc, D",
                        Layout::contiguous),
            ops::output("grad_k", {DType::bf16}, "T, hc, D",
                        Layout::inner_contiguous, "2.1: grad_kv[:, :hc]"),
            ops::output("grad_v", {DType::bf16}, "T, D",
                        Layout::inner_contiguous, "2.1: grad_kv[:, hc]"),
            ops::output("grad_w_partial", {DType::f32}, "num_sms, hc, D",
                        Layout::contiguous,
                        "a row per block: its tokens' dL/dweight_fused")},
       .params = {ops::real("clamp_value", 1e-6, 0.0,
                            "the forward's clamp_value"),
                  ops::integer("num_sms", 132, 1, 1 << 16,
                               "persistent blocks (grad_w_partial's rows)"),
                  stages_param(),
                  ops::choice(
                      "grad_w", "registers_2",
                      {"registers_2", "registers_4", "global"},
                      "where each block's grad_w row is summed: registers_2 "
                      "(2 columns of every head a thread, 512 threads) or "
                      "registers_4 (4 columns, 256 threads), where the row "
                      "fits (64 or 128 floats a thread) and k's and grad_k's "
                      "heads are D apart (`stages` 1 or more: the next "
                      "chunk's loads issued before this one's stores); global: "
                      "added to in memory token by token (any k)")},
       .dim_rules = {{.dim = "hc", .min = 4, .max = 4},
                     {.dim = "D", .min = 256, .multiple = 256}},
       .cli_shape = "T, hc, D",
       .default_shape = {8001, 4, 7168},
       .reference =
           [](const ops::HostCall &c) {
             EngramGateBwdResult r = engram_gate_bwd_ref(
                 c.tensor("grad_out"), c.tensor("hidden_states"), c.tensor("k"),
                 c.tensor("v"), c.tensor("weight_fused"), c.tensor("dot"),
                 c.tensor("gate_score"), c.tensor("rstd_x"), c.tensor("rstd_k"),
                 static_cast<float>(c.real("clamp_value")),
                 c.integer("num_sms"), c.given("image_token_mask"));
             return std::vector{r.grad_x, r.grad_k, r.grad_v, r.grad_w_partial};
           }},
      {bwd_spec, engram_gate_bwd_kernel, bwd_views});
  return op;
}
TILEJIT_REGISTER_OP(engram_gate_bwd_op);

} // namespace tilejit::engram
