// mhc_multilayer_recompute.cpp - mhc_multilayer_recompute declared
// (moe_engram_mhc.md §3.9, unchanged in 2.1): from the stack's first
// residual and each layer's saved mixes and output, every layer's input and
// every residual after a layer, into the tensors passed. TileKernels takes
// Python lists; here list `name` is the optional tensors name_0 ..
// name_9, passed from 0 on (L pre mixes and layer inputs, P = L or L - 1
// of the others).
#include "mhc/mhc_multilayer_recompute.h"
#include "mhc/mhc_stream.h"
#include "mhc/reference.h"

#include "op/op.h"

#include <array>
#include <string>

namespace tilejit::mhc {

namespace {

using ops::Layout;

enum List { pre_mix, layer_output, post_mix, comb_mix, layer_input, residual };
constexpr std::array<const char *, 6> kLists = {"pre_mix",     "layer_output",
                                                "post_mix",    "comb_mix",
                                                "layer_input", "residual"};

/// Tensor l of a list by name (stable storage: KernelArgs keeps views of
/// the names).
const std::string &name_of(List list, int l) {
  static const auto names = [] {
    std::array<std::array<std::string, kRecomputeLayers>, kLists.size()> n;
    for (size_t i = 0; i < kLists.size(); ++i)
      for (int j = 0; j < kRecomputeLayers; ++j)
        n[i][j] = fmt::format("{}_{}", kLists[i], j);
    return n;
  }();
  return names[list][static_cast<size_t>(l)];
}

/// How many of a list's tensors the call passes, from 0 on; UserError for
/// one passed after one left out.
int passed(const ops::Call &c, List list) {
  int n = 0;
  while (n < kRecomputeLayers && c.has(name_of(list, n)))
    ++n;
  for (int l = n + 1; l < kRecomputeLayers; ++l)
    if (c.has(name_of(list, l)))
      throw UserError(fmt::format(
          "mhc_multilayer_recompute: argument '{}' is passed while '{}' is "
          "None; requires a list's tensors from 0 on",
          name_of(list, l), name_of(list, n)));
  return n;
}

void check(const ops::Call &c) {
  const int layers = passed(c, pre_mix), posts = passed(c, layer_output);
  if (layers == 0)
    throw UserError("mhc_multilayer_recompute: argument 'pre_mix_0' is None; "
                    "requires at least one layer");
  if (posts != layers && posts + 1 != layers)
    throw UserError(fmt::format(
        "mhc_multilayer_recompute: {} layer outputs for {} layers; requires "
        "L - 1 or L (L = {}, the pre mixes passed)",
        posts, layers, layers));
  for (List list : {post_mix, comb_mix, residual, layer_input}) {
    const int want = list == layer_input ? layers : posts;
    if (const int n = passed(c, list); n != want)
      throw UserError(fmt::format(
          "mhc_multilayer_recompute: {} tensors {}_0.. passed; requires {} "
          "(the {})",
          n, kLists[list], want,
          list == layer_input ? "pre mixes passed" : "layer outputs passed"));
  }
}

MhcRecomputeSpec spec(const ops::Call &c) {
  MhcRecomputeSpec s;
  const MhcStreamSpec stream = stream_spec(c, c.dim("mhc"), {});
  s.mhc = stream.mhc;
  s.layers = passed(c, pre_mix);
  s.posts = passed(c, layer_output);
  s.chunk = stream.chunk;
  s.threads = stream.threads;
  s.vector_bytes = 16; // every bf16 row 16-byte aligned
  for (const ops::TensorDecl &d : c.op().tensors)
    if (c.has(d.name) && c.tensor(d.name).dtype == DType::bf16 &&
        !ops::rows_aligned(c.tensor(d.name), 16))
      s.vector_bytes = 0;
  return s;
}

/// The residuals as (N, mhc, H); the rows (N, H) and the mixes (N, mhc),
/// (N, mhc^2) as matrices.
void views(const ops::Call &c, const MhcRecomputeSpec &s,
           ops::KernelArgs &args) {
  const int64_t h = c.dim("H"), mhc = s.mhc;
  const rt::TensorView &initial = c.tensor("initial_residual");
  const int64_t n = tokens_of(initial, 2);
  args.tensor("initial_residual", token_rows(initial, 2, mhc, h));
  auto matrix = [&](List list, int l, int64_t cols) {
    args.tensor(name_of(list, l),
                token_matrix(c.tensor(name_of(list, l)), n, cols, cols));
  };
  for (int l = 0; l < s.layers; ++l) {
    matrix(pre_mix, l, mhc);
    matrix(layer_input, l, h);
  }
  for (int l = 0; l < s.posts; ++l) {
    matrix(layer_output, l, h);
    matrix(post_mix, l, mhc);
    matrix(comb_mix, l, mhc * mhc);
    args.tensor(name_of(residual, l),
                token_rows(c.tensor(name_of(residual, l)), 2, mhc, h));
  }
}

std::vector<ops::TensorDecl> tensors() {
  const std::vector<DType> bf16 = {DType::bf16}, f32 = {DType::f32};
  std::vector<ops::TensorDecl> t = {ops::input("initial_residual", bf16,
                                               "*, mhc, H", Layout::contiguous,
                                               "the residual before layer 0")};
  // Layer 0's tensors passed by default (L = P = 1), the others not.
  auto list = [&](List which, bool output, const std::vector<DType> &dtypes,
                  const char *shape, const char *doc) {
    for (int l = 0; l < kRecomputeLayers; ++l) {
      const std::string &name = name_of(which, l);
      t.push_back(ops::optional(
          output ? ops::output(name, dtypes, shape, Layout::contiguous, doc)
                 : ops::input(name, dtypes, shape, Layout::contiguous, doc),
          l == 0));
    }
  };
  list(pre_mix, false, f32, "*, mhc, 1", "layer l's pre mix");
  list(layer_output, false, bf16, "*, H", "layer l's output (P of them)");
  list(post_mix, false, f32, "*, mhc, 1", "layer l's post mix");
  list(comb_mix, false, f32, "*, mhc, mhc", "layer l's comb mix");
  list(layer_input, true, bf16, "*, H", "layer l's input, written");
  list(residual, true, bf16, "*, mhc, H", "the residual after layer l");
  return t;
}

std::vector<ref::HostTensor> reference(const ops::HostCall &c) {
  std::vector<ref::HostTensor> in[4], out[2];
  for (List list : {pre_mix, layer_output, post_mix, comb_mix})
    for (int l = 0; l < kRecomputeLayers && c.has(name_of(list, l)); ++l)
      in[list].push_back(c.tensor(name_of(list, l)));
  for (List list : {layer_input, residual})
    for (int l = 0; l < kRecomputeLayers && c.has(name_of(list, l)); ++l) {
      const ops::TensorShape &s = c.output(name_of(list, l));
      out[list - layer_input].push_back(
          ref::HostTensor::zeros(s.dtype, s.shape));
    }
  mhc_multilayer_recompute_ref(c.tensor("initial_residual"), in[pre_mix],
                               in[layer_output], in[post_mix], in[comb_mix],
                               out[0], out[1]);
  std::vector<ref::HostTensor> outputs;
  for (const std::vector<ref::HostTensor> &list : out)
    for (int l = 0; l < kRecomputeLayers; ++l)
      outputs.push_back(l < static_cast<int>(list.size()) ? list[l]
                                                          : ref::HostTensor{});
  return outputs;
}

} // namespace

const ops::OpDef &mhc_multilayer_recompute_op() {
  static const ops::OpDef op = ops::make_op<MhcRecomputeSpec>(
      {.name = "mhc_multilayer_recompute",
       .summary = "mHC's activation recompute over a stack of up to 10 "
                  "layers: each layer's input and the residual after it, "
                  "from the first residual and the saved mixes and outputs",
       .tensors = tensors(),
       .dim_rules = stream_rules(),
       .cli_shape = "*, mhc, H",
       .default_shape = {8192, 4, 7168},
       .check = check,
       .reference = reference},
      {spec, mhc_multilayer_recompute_kernel, views});
  return op;
}
TILEJIT_REGISTER_OP(mhc_multilayer_recompute_op);

} // namespace tilejit::mhc
