// sinkhorn_normalize.cpp - Host entry of sinkhorn_normalize: validate,
// specialise, get or compile, launch.
#include "mhc/sinkhorn_normalize.h"

#include "common/abi.h"
#include "common/check.h"
#include "common/jit.h"
#include "common/kernel_table.h"

#include "tilejit/error.h"
#include "tilejit/runtime/launch.h"

#include <fmt/format.h>

#include <bit>
#include <cmath>

namespace tilejit::mhc {

static constexpr std::string_view kOp = "sinkhorn_normalize";

rt::SpecKey sinkhorn_normalize_key(const SinkhornSpec &spec) {
  rt::SpecKey key = ops::make_key("sinkhorn_normalize");
  key.add("n", std::to_string(spec.n))
      .add("repeat", std::to_string(spec.repeat))
      .add("eps_bits", std::to_string(spec.eps_bits))
      .add("block_b", std::to_string(spec.block_b))
      .add("threads", std::to_string(spec.threads))
      .add("vector_bytes", std::to_string(spec.vector_bytes));
  return key;
}

SinkhornSpec sinkhorn_normalize_spec(int64_t n, int repeat, float eps) {
  if (n < 1 || n > 32 || !std::has_single_bit(static_cast<uint64_t>(n)))
    throw UserError(fmt::format("{}: argument 'x' has {} x {} matrices; "
                                "requires n a power of two up to 32",
                                kOp, n, n));
  if (repeat < 1 || repeat > 100)
    throw UserError(fmt::format("{}: argument 'repeat' is {}; requires 1 to "
                                "100",
                                kOp, repeat));
  if (!(eps >= 0) || !std::isfinite(eps))
    throw UserError(fmt::format("{}: argument 'eps' is {}; requires a finite "
                                "eps >= 0",
                                kOp, eps));
  SinkhornSpec spec;
  spec.n = static_cast<int32_t>(n);
  spec.repeat = repeat;
  spec.eps_bits = std::bit_cast<uint32_t>(eps);
  // 1024 elements a block of 128 threads: 8 each.
  spec.block_b = static_cast<int32_t>(std::max<int64_t>(1, 1024 / (n * n)));
  spec.vector_bytes = (n * 4) % 16 == 0 ? 16 : 0;
  return spec;
}

void sinkhorn_normalize(const rt::TensorView &x, const rt::TensorView &out,
                        int repeat, float eps, CUstream stream) {
  if (x.rank < 2 || x.shape[x.rank - 1] != x.shape[x.rank - 2])
    throw UserError(fmt::format("{}: argument 'x' is {}; requires (..., n, n)",
                                kOp, x.to_string()));
  ops::check_dtype(kOp, "x", x, DType::f32);
  if (!x.is_contiguous())
    throw UserError(fmt::format("{}: argument 'x' is {}; requires a "
                                "contiguous tensor",
                                kOp, x.to_string()));
  ops::check_same_shape(kOp, "x", x, "out", out);
  ops::check_dtype(kOp, "out", out, DType::f32);
  if (!out.is_contiguous())
    throw UserError(fmt::format("{}: argument 'out' is {}; requires a "
                                "contiguous tensor",
                                kOp, out.to_string()));
  const int64_t n = x.shape[x.rank - 1];
  SinkhornSpec spec = sinkhorn_normalize_spec(n, repeat, eps);
  ops::check_pointer(kOp, "x", x);
  ops::check_pointer(kOp, "out", out);
  int64_t batches = x.numel() / std::max<int64_t>(n * n, 1);
  if (batches == 0)
    return;
  if (spec.vector_bytes &&
      (!ops::rows_aligned(x, 16) || !ops::rows_aligned(out, 16)))
    spec.vector_bytes = 0;

  static ops::KernelTable<SinkhornSpec> table;
  const ops::LoadedKernel &kernel =
      table.get(spec, [&]() -> const ops::LoadedKernel & {
        return ops::load_kernel(sinkhorn_normalize_key(spec), [&] {
          return sinkhorn_normalize_kernel(spec);
        });
      });
  const int64_t shape[3] = {batches, n, n};
  rt::ArgPack args;
  ops::push_tensor(args, rt::TensorView::contiguous(x.data, x.dtype, shape));
  ops::push_tensor(args,
                   rt::TensorView::contiguous(out.data, out.dtype, shape));
  rt::LaunchConfig config;
  config.grid = {
      static_cast<uint32_t>((batches + spec.block_b - 1) / spec.block_b), 1, 1};
  config.block = {static_cast<uint32_t>(spec.threads), 1, 1};
  config.stream = stream;
  rt::launch(kernel.function, config, args.data());
}

} // namespace tilejit::mhc
