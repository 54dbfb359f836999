// batched_transpose.cpp - Host entry of batched_transpose and transpose:
// validate, specialise, get or compile, launch.
#include "transpose/batched_transpose.h"

#include "common/abi.h"
#include "common/check.h"
#include "common/jit.h"
#include "common/kernel_table.h"

#include "tilejit/error.h"
#include "tilejit/runtime/launch.h"

#include <fmt/format.h>

namespace tilejit::transpose {

static constexpr std::string_view kOp = "batched_transpose";

rt::SpecKey batched_transpose_key(const BatchedTransposeSpec &spec) {
  rt::SpecKey key = ops::make_key("batched_transpose");
  key.add("dtype", name_of(spec.dtype))
      .add("block_x", std::to_string(spec.block_x))
      .add("block_y", std::to_string(spec.block_y))
      .add("tiles_y", std::to_string(spec.tiles_y))
      .add("threads", std::to_string(spec.threads))
      .add("vector_bytes", std::to_string(spec.vector_bytes));
  return key;
}

BatchedTransposeSpec batched_transpose_spec(DType dtype, int64_t y,
                                            bool aligned) {
  BatchedTransposeSpec spec;
  spec.dtype = dtype;
  if (aligned)
    spec.vector_bytes = 16;
  // 16 bytes a thread a tile; up to 4 tiles (64 bytes a thread).
  int64_t tiles = 4 / static_cast<int64_t>(size_of(dtype));
  while (tiles > 1 && y % (spec.block_y * tiles) != 0)
    tiles /= 2;
  spec.tiles_y = static_cast<int32_t>(tiles);
  return spec;
}

static void check_args(const rt::TensorView &x, const rt::TensorView &out) {
  ops::check_rank(kOp, "x", x, 3);
  size_t bytes = size_of(x.dtype);
  if (bytes != 1 && bytes != 2 && bytes != 4)
    throw UserError(fmt::format("{}: argument 'x' has dtype {}; requires a "
                                "dtype of 1, 2 or 4 bytes",
                                kOp, name_of(x.dtype)));
  ops::check_dtype(kOp, "out", out, x.dtype);
  for (int d : {1, 2})
    if (x.shape[d] % 64 != 0)
      throw UserError(fmt::format("{}: argument 'x' has shape [{}, {}, {}]; "
                                  "requires dims 1 and 2 to be multiples of 64",
                                  kOp, x.shape[0], x.shape[1], x.shape[2]));
  if (x.strides[2] != 1 || x.strides[1] % 4 != 0)
    throw UserError(fmt::format("{}: argument 'x' has strides [{}, {}, {}]; "
                                "requires stride[2] = 1 and stride[1] a "
                                "multiple of 4",
                                kOp, x.strides[0], x.strides[1], x.strides[2]));
  if (x.shape[0] > 1 && x.strides[0] != x.shape[1] * x.strides[1])
    throw UserError(fmt::format("{}: argument 'x' has stride[0] = {}; "
                                "requires shape[1] * stride[1] = {}",
                                kOp, x.strides[0], x.shape[1] * x.strides[1]));
  if (out.rank != 3 || out.shape[0] != x.shape[0] ||
      out.shape[1] != x.shape[2] || out.shape[2] != x.shape[1] ||
      !out.is_contiguous())
    throw UserError(fmt::format("{}: argument 'out' is {}; requires a "
                                "contiguous [{}, {}, {}]",
                                kOp, out.to_string(), x.shape[0], x.shape[2],
                                x.shape[1]));
  ops::check_pointer(kOp, "x", x);
  ops::check_pointer(kOp, "out", out);
}

void batched_transpose(const rt::TensorView &x, const rt::TensorView &out,
                       CUstream stream) {
  check_args(x, out);
  if (x.numel() == 0)
    return;
  const BatchedTransposeSpec spec = batched_transpose_spec(
      x.dtype, x.shape[2],
      ops::rows_aligned(x, 16) && ops::rows_aligned(out, 16));

  static ops::KernelTable<BatchedTransposeSpec> table;
  const ops::LoadedKernel &kernel =
      table.get(spec, [&]() -> const ops::LoadedKernel & {
        return ops::load_kernel(batched_transpose_key(spec),
                                [&] { return batched_transpose_kernel(spec); });
      });

  rt::ArgPack args;
  ops::push_tensor(args, x);
  ops::push_tensor(args, out);
  rt::LaunchConfig config;
  config.grid = {
      static_cast<uint32_t>(x.shape[2] / (spec.block_y * spec.tiles_y)),
      static_cast<uint32_t>(x.shape[1] / spec.block_x),
      static_cast<uint32_t>(x.shape[0])};
  config.block = {static_cast<uint32_t>(spec.threads), 1, 1};
  config.stream = stream;
  rt::launch(kernel.function, config, args.data());
}

void transpose(const rt::TensorView &x, const rt::TensorView &out,
               CUstream stream) {
  ops::check_rank("transpose", "x", x, 2);
  ops::check_rank("transpose", "out", out, 2);
  const int64_t xs[3] = {1, x.shape[0], x.shape[1]};
  const int64_t xst[3] = {x.shape[0] * x.strides[0], x.strides[0],
                          x.strides[1]};
  const int64_t os[3] = {1, out.shape[0], out.shape[1]};
  const int64_t ost[3] = {out.shape[0] * out.strides[0], out.strides[0],
                          out.strides[1]};
  batched_transpose(rt::TensorView::strided(x.data, x.dtype, xs, xst),
                    rt::TensorView::strided(out.data, out.dtype, os, ost),
                    stream);
}

} // namespace tilejit::transpose
