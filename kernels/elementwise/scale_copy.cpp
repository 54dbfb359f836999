// scale_copy.cpp - Host entry of scale_copy: validate, specialise, get or
// compile, launch.
#include "elementwise/scale_copy.h"

#include "common/abi.h"
#include "common/check.h"
#include "common/jit.h"
#include "common/kernel_table.h"

#include "tilejit/error.h"
#include "tilejit/runtime/launch.h"

#include <fmt/format.h>

namespace tilejit::elementwise {

static constexpr std::string_view kOp = "scale_copy";

rt::SpecKey scale_copy_key(const ScaleCopySpec &spec) {
  rt::SpecKey key = ops::make_key("scale_copy");
  key.add("dtype", name_of(spec.dtype))
      .add("block_m", std::to_string(spec.block_m))
      .add("block_n", std::to_string(spec.block_n))
      .add("threads", std::to_string(spec.threads))
      .add("vector_bytes", std::to_string(spec.vector_bytes));
  return key;
}

void scale_copy(const rt::TensorView &x, const rt::TensorView &out, float scale,
                CUstream stream) {
  ops::check_dtype(kOp, "x", x, DType::f32);
  ops::check_dtype(kOp, "out", out, DType::f32);
  ops::check_rank(kOp, "x", x, 2);
  ops::check_same_shape(kOp, "x", x, "out", out);
  ops::check_pointer(kOp, "x", x);
  ops::check_pointer(kOp, "out", out);

  ScaleCopySpec spec;
  if (ops::rows_aligned(x, 16) && ops::rows_aligned(out, 16))
    spec.vector_bytes = 16;
  int64_t rows = x.shape[0], cols = x.shape[1];
  int64_t grid_m = (rows + spec.block_m - 1) / spec.block_m;
  int64_t grid_n = (cols + spec.block_n - 1) / spec.block_n;
  if (grid_m > 0x7fffffff || grid_n > 65535)
    throw UserError(fmt::format(
        "scale_copy: argument 'x' has shape [{}, {}]; requires at most {} "
        "rows and {} columns",
        rows, cols, int64_t{0x7fffffff} * spec.block_m,
        int64_t{65535} * spec.block_n));
  if (rows == 0 || cols == 0)
    return;

  // Hot path: a lock-free lookup by the spec itself (bytewise); the SpecKey,
  // the caches and the compiler are reached only on the first call.
  static ops::KernelTable<ScaleCopySpec> table;
  const ops::LoadedKernel &kernel =
      table.get(spec, [&]() -> const ops::LoadedKernel & {
        return ops::load_kernel(scale_copy_key(spec),
                                [&] { return scale_copy_kernel(spec); });
      });

  rt::ArgPack args;
  ops::push_tensor(args, x);
  ops::push_tensor(args, out);
  args.push(scale);
  rt::LaunchConfig config;
  config.grid = {static_cast<uint32_t>(grid_m), static_cast<uint32_t>(grid_n),
                 1};
  config.block = {static_cast<uint32_t>(spec.threads), 1, 1};
  config.stream = stream;
  rt::launch(kernel.function, config, args.data());
}

} // namespace tilejit::elementwise
