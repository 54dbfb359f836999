// topk_gate.cpp - Host entry of topk_gate: validate, specialise, get or
// compile, launch.
#include "moe/topk_gate.h"

#include "common/abi.h"
#include "common/check.h"
#include "common/jit.h"
#include "common/kernel_table.h"

#include "tilejit/error.h"
#include "tilejit/runtime/launch.h"

#include <fmt/format.h>

#include <bit>

namespace tilejit::moe {

static constexpr std::string_view kOp = "topk_gate";

rt::SpecKey topk_gate_key(const TopkGateSpec &spec) {
  rt::SpecKey key = ops::make_key("topk_gate");
  key.add("num_experts", std::to_string(spec.num_experts))
      .add("num_topk", std::to_string(spec.num_topk))
      .add("block_t", std::to_string(spec.block_t))
      .add("threads", std::to_string(spec.threads))
      .add("vector_bytes", std::to_string(spec.vector_bytes));
  return key;
}

TopkGateSpec topk_gate_spec(int64_t num_experts, int64_t num_topk) {
  if (num_experts < 1 || num_experts > 1024)
    throw UserError(fmt::format("{}: argument 'scores' has {} experts "
                                "(columns); requires 1 to 1024",
                                kOp, num_experts));
  if (num_topk < 1 || num_topk > num_experts)
    throw UserError(fmt::format("{}: argument 'num_topk' is {}; requires 1 "
                                "<= num_topk <= {} (the experts)",
                                kOp, num_topk, num_experts));
  TopkGateSpec spec;
  spec.num_experts = static_cast<int32_t>(num_experts);
  spec.num_topk = static_cast<int32_t>(num_topk);
  // About 16 scores a thread of the one-warp block.
  int64_t width =
      static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(num_experts)));
  spec.block_t = static_cast<int32_t>(std::max<int64_t>(1, 512 / width));
  spec.vector_bytes = (num_experts * 4) % 16 == 0 ? 16 : 0;
  return spec;
}

void topk_gate(const rt::TensorView &scores, int64_t num_topk,
               const rt::TensorView &topk_idx, CUstream stream) {
  ops::check_rank(kOp, "scores", scores, 2);
  ops::check_dtype(kOp, "scores", scores, DType::f32);
  if (!scores.is_contiguous())
    throw UserError(fmt::format("{}: argument 'scores' is {}; requires a "
                                "contiguous tensor",
                                kOp, scores.to_string()));
  const int64_t t = scores.shape[0], e = scores.shape[1];
  TopkGateSpec spec = topk_gate_spec(e, num_topk);
  if (topk_idx.rank != 2 || topk_idx.dtype != DType::i64 ||
      topk_idx.shape[0] != t || topk_idx.shape[1] != num_topk ||
      !topk_idx.is_contiguous())
    throw UserError(fmt::format("{}: argument 'topk_idx' is {}; requires a "
                                "contiguous i64 [{}, {}]",
                                kOp, topk_idx.to_string(), t, num_topk));
  ops::check_pointer(kOp, "scores", scores);
  ops::check_pointer(kOp, "topk_idx", topk_idx);
  if (t == 0)
    return;
  if (spec.vector_bytes && !ops::rows_aligned(scores, 16))
    spec.vector_bytes = 0;

  static ops::KernelTable<TopkGateSpec> table;
  const ops::LoadedKernel &kernel =
      table.get(spec, [&]() -> const ops::LoadedKernel & {
        return ops::load_kernel(topk_gate_key(spec),
                                [&] { return topk_gate_kernel(spec); });
      });
  rt::ArgPack args;
  ops::push_tensor(args, scores);
  ops::push_tensor(args, topk_idx);
  rt::LaunchConfig config;
  config.grid = {static_cast<uint32_t>((t + spec.block_t - 1) / spec.block_t),
                 1, 1};
  config.block = {static_cast<uint32_t>(spec.threads), 1, 1};
  config.stream = stream;
  rt::launch(kernel.function, config, args.data());
}

} // namespace tilejit::moe
