// gemm.cpp - Host entry of gemm: validate, specialise, encode the tensor
// maps, get or compile, launch.
#include "gemm/gemm.h"

#include "common/check.h"
#include "common/jit.h"
#include "common/kernel_table.h"

#include "tilejit/error.h"
#include "tilejit/runtime/driver.h"
#include "tilejit/runtime/launch.h"
#include "tilejit/runtime/tensor_map.h"

#include <fmt/format.h>

namespace tilejit::gemm {

static constexpr std::string_view kOp = "gemm";

GemmSpec gemm_spec(DType in_dtype, DType out_dtype, int64_t m, int64_t n) {
  GemmSpec spec;
  spec.in_dtype = in_dtype;
  spec.out_dtype = out_dtype;
  spec.block_n = n <= 128 ? 128 : 256;
  // Whole tiles only: the epilogue stores without masks (and compiles in
  // about a fifth less time).
  spec.full_tiles = m % 128 == 0 && n % spec.block_n == 0;
  return spec;
}

rt::SpecKey gemm_key(const GemmSpec &spec) {
  rt::SpecKey key = ops::make_key("gemm");
  key.add("in_dtype", name_of(spec.in_dtype))
      .add("out_dtype", name_of(spec.out_dtype))
      .add("block_n", std::to_string(spec.block_n))
      .add("stages", std::to_string(spec.stages))
      .add("group_m", std::to_string(spec.group_m))
      .add("full_tiles", std::to_string(spec.full_tiles));
  return key;
}

int64_t gemm_block_k(const GemmSpec &spec) {
  return 128 / static_cast<int64_t>(size_of(spec.in_dtype)); // 128-byte rows
}

int64_t gemm_shared_bytes(const GemmSpec &spec) {
  // Must agree with the compiler's gemm lowering (GemmKernelText.cpp).
  return static_cast<int64_t>(spec.stages) * (128 + spec.block_n) * 128 + 1024;
}

static void check_operand(std::string_view name, const rt::TensorView &t,
                          DType dtype) {
  ops::check_rank(kOp, name, t, 2);
  ops::check_dtype(kOp, name, t, dtype);
  size_t elt = size_of(t.dtype);
  bool ok =
      t.numel() == 0 || // nothing is read
      ((t.shape[1] <= 1 || t.strides[1] == 1) &&
       (t.shape[0] <= 1 || (t.strides[0] * elt) % 16 == 0) && t.data % 16 == 0);
  if (!ok)
    throw UserError(fmt::format("{}: argument '{}' is {} at {:#x}; requires "
                                "unit inner stride, rows of a multiple of 16 "
                                "bytes and a 16-byte-aligned base",
                                kOp, name, t.to_string(), t.data));
}

void gemm(const rt::TensorView &a, const rt::TensorView &b,
          const rt::TensorView &c, CUstream stream) {
  ops::check_rank(kOp, "a", a, 2);
  if (a.dtype != DType::bf16 && a.dtype != DType::f16 &&
      a.dtype != DType::f32 && a.dtype != DType::e4m3 && a.dtype != DType::e5m2)
    throw UserError(fmt::format("{}: argument 'a' has dtype {}; requires bf16, "
                                "f16, f32 (multiplied as tf32), e4m3 or e5m2",
                                kOp, name_of(a.dtype)));
  check_operand("a", a, a.dtype);
  check_operand("b", b, a.dtype);
  const int64_t m = a.shape[0], k = a.shape[1], n = b.shape[0];
  if (b.shape[1] != k)
    throw UserError(fmt::format("{}: argument 'b' is {}; requires K = {} "
                                "columns, as 'a'",
                                kOp, b.to_string(), k));
  const bool empty = m == 0 || n == 0;
  if (c.rank != 2 || c.shape[0] != m || c.shape[1] != n ||
      (c.dtype != DType::bf16 && c.dtype != DType::f16 &&
       c.dtype != DType::f32) ||
      (!empty && ((n > 1 && c.strides[1] != 1) || n % 2 != 0 ||
                  c.data % (2 * size_of(c.dtype)) != 0 ||
                  (m > 1 && c.strides[0] % 2 != 0))))
    throw UserError(fmt::format("{}: argument 'c' is {}; requires bf16, f16 "
                                "or f32 [{}, {}] with unit inner stride, an "
                                "even N and even row stride",
                                kOp, c.to_string(), m, n));
  ops::check_pointer(kOp, "c", c);
  if (m == 0 || n == 0)
    return;
  if (k == 0) { // an empty sum: zeros
    const rt::Driver &d = rt::driver();
    size_t row = static_cast<size_t>(n) * size_of(c.dtype);
    size_t pitch =
        static_cast<size_t>(m > 1 ? c.strides[0] : n) * size_of(c.dtype);
    if (CUresult r = d.cuMemsetD2D8Async(c.data, pitch, 0, row,
                                         static_cast<size_t>(m), stream))
      throw DriverError(fmt::format("cuMemsetD2D8Async of gemm's c failed "
                                    "with CUresult {}",
                                    static_cast<int>(r)));
    return;
  }

  const GemmSpec spec = gemm_spec(a.dtype, c.dtype, m, n);

  static ops::KernelTable<GemmSpec> table;
  const ops::LoadedKernel &kernel =
      table.get(spec, [&]() -> const ops::LoadedKernel & {
        return ops::load_kernel(gemm_key(spec),
                                [&] { return gemm_kernel(spec); });
      });

  rt::ArgPack args;
  const auto bk = static_cast<uint32_t>(gemm_block_k(spec));
  args.push(rt::encode_tensor_map_2d(a, "a", 128, bk, true));
  args.push(rt::encode_tensor_map_2d(
      b, "b", static_cast<uint32_t>(spec.block_n), bk, true));
  args.push(c.data);
  args.push(m);
  args.push(n);
  args.push(k);
  args.push(m > 1 ? c.strides[0] : n);
  rt::LaunchConfig config;
  int64_t tiles = ((m + 127) / 128) * ((n + spec.block_n - 1) / spec.block_n);
  config.grid = {static_cast<uint32_t>(tiles), 1, 1};
  config.block = {384, 1, 1};
  config.shared_bytes = static_cast<uint32_t>(gemm_shared_bytes(spec));
  config.stream = stream;
  rt::launch(kernel.function, config, args.data());
}

} // namespace tilejit::gemm
