// registry.cpp - The table of ops by name.
#include "registry.h"

#include "elementwise/scale_copy.h"

#include "tilejit/error.h"

#include <charconv>
#include <fmt/format.h>

namespace tilejit::ops {

RunResult run_scale_copy(const OpArgs &args, const RunOptions &options);
Kernel build_scale_copy(const OpArgs &args);
rt::SpecKey key_scale_copy(const OpArgs &args);
RunResult run_batched_transpose(const OpArgs &args, const RunOptions &options);
Kernel build_batched_transpose(const OpArgs &args);
rt::SpecKey key_batched_transpose(const OpArgs &args);
RunResult run_per_token_cast(const OpArgs &args, const RunOptions &options);
Kernel build_per_token_cast(const OpArgs &args);
rt::SpecKey key_per_token_cast(const OpArgs &args);
RunResult run_topk_gate(const OpArgs &args, const RunOptions &options);
Kernel build_topk_gate(const OpArgs &args);
rt::SpecKey key_topk_gate(const OpArgs &args);
RunResult run_sinkhorn_normalize(const OpArgs &args, const RunOptions &options);
Kernel build_sinkhorn_normalize(const OpArgs &args);
rt::SpecKey key_sinkhorn_normalize(const OpArgs &args);
RunResult run_gemm(const OpArgs &args, const RunOptions &options);
Kernel build_gemm(const OpArgs &args);
rt::SpecKey key_gemm(const OpArgs &args);

double OpArgs::number(std::string_view op, std::string_view name,
                      double fallback) const {
  auto it = set.find(std::string(name));
  if (it == set.end())
    return fallback;
  double value = 0;
  const std::string &text = it->second;
  auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size())
    throw UserError(
        fmt::format("{}: --set {}={} is not a number", op, name, text));
  return value;
}

const std::vector<OpInfo> &all_ops() {
  static const std::vector<OpInfo> ops = {
      {"scale_copy",
       "out = x * scale over a strided 2-D f32 tensor (foundation kernel)",
       {"scale"},
       {8192, 8192},
       build_scale_copy,
       key_scale_copy,
       run_scale_copy},
      {"batched_transpose",
       "out[b, y, x] = x[b, x, y] for (B, X, Y), X and Y multiples of 64",
       {},
       {8, 4032, 7168},
       build_batched_transpose,
       key_batched_transpose,
       run_batched_transpose},
      {"per_token_cast",
       "fp8 e4m3 quantization of (M, K) bf16/f32 rows in groups of "
       "num_per_channels channels, with scales",
       {"num_per_channels", "round_sf", "use_tma_aligned_col_major_sf",
        "use_packed_ue8m0", "fmt"},
       {8064, 7168},
       build_per_token_cast,
       key_per_token_cast,
       run_per_token_cast},
      {"topk_gate",
       "indices of the num_topk largest f32 scores of each (T, E) row, "
       "descending, ties to the lower index",
       {"num_topk"},
       {8001, 256},
       build_topk_gate,
       key_topk_gate,
       run_topk_gate},
      {"sinkhorn_normalize",
       "Sinkhorn normalisation (softmax, then alternating column and row "
       "normalisation) of f32 (..., n, n) matrices, forward",
       {"repeat", "eps"},
       {2, 4096, 4, 4},
       build_sinkhorn_normalize,
       key_sinkhorn_normalize,
       run_sinkhorn_normalize},
      {"gemm",
       "c = a * b^T for bf16 a (M, K) and b (N, K), f32 accumulation, TMA + "
       "WGMMA",
       {"m", "n", "k", "out_dtype"},
       {8192, 8192, 8192},
       build_gemm,
       key_gemm,
       run_gemm},
  };
  return ops;
}

const OpInfo *find_op(std::string_view name) {
  for (const OpInfo &op : all_ops())
    if (op.name == name)
      return &op;
  return nullptr;
}

} // namespace tilejit::ops
