// gemm.cpp - gemm declared: c = a * b^T, 128 x block_n tiles of C; the
// kernel's TMA maps, sizes and shared memory come from its ABI.
#include "gemm/gemm.h"

#include "op/op.h"
#include "op/zero_output.h"

namespace tilejit::gemm {

static constexpr std::string_view kOp = "gemm";

int64_t gemm_block_k(const GemmSpec &spec) {
  return 128 / static_cast<int64_t>(size_of(spec.in_dtype)); // 128-byte rows
}

/// What a tensor map of `t` needs (rt::encode_tensor_map): a 16-byte
/// aligned base and rows of a multiple of 16 bytes.
static bool tma_rows(const rt::TensorView &t) {
  return t.data % 16 == 0 &&
         (t.strides[0] * static_cast<int64_t>(size_of(t.dtype))) % 16 == 0;
}

static GemmSpec spec(const ops::Call &c) {
  GemmSpec s;
  s.in_dtype = c.tensor("a").dtype;
  s.out_dtype = c.tensor("c").dtype;
  const int64_t m = c.dim("m"), n = c.dim("n");
  s.block_n = n <= 128 ? 128 : 256;
  // Whole tiles only: the epilogue stores without masks (and compiles in
  // about a fifth less time).
  s.full_tiles = m % 128 == 0 && n % s.block_n == 0;
  s.aligned_c = tma_rows(c.tensor("c"));
  return s;
}

/// TMA reads rows of 16-byte multiples from a 16-byte-aligned base; the
/// epilogue stores pairs.
static void check(const ops::Call &call) {
  for (const char *name : {"a", "b"}) {
    const rt::TensorView &t = call.tensor(name);
    if (t.numel() != 0 && !tma_rows(t))
      throw UserError(fmt::format(
          "{}: argument '{}' is {} at {:#x}; requires rows of a multiple of "
          "16 bytes and a 16-byte-aligned base",
          kOp, name, t.to_string(), t.data));
  }
  const rt::TensorView &c = call.tensor("c");
  if (c.numel() != 0 &&
      (c.shape[1] % 2 != 0 || (c.shape[0] > 1 && c.strides[0] % 2 != 0) ||
       c.data % (2 * size_of(c.dtype)) != 0))
    throw UserError(fmt::format("{}: argument 'c' is {}; requires an even N, "
                                "an even row stride and a base aligned to "
                                "two elements",
                                kOp, c.to_string()));
}

/// K = 0: an empty sum, zeros.
static bool zeros(const ops::Call &call, CUstream stream) {
  if (call.dim("k") != 0)
    return false;
  ops::zero_output(call.tensor("c"), stream);
  return true;
}

const ops::OpDef &gemm_op() {
  static const ops::OpDef op = ops::make_op<GemmSpec>(
      {.name = "gemm",
       .summary = "c = a * b^T for a (m, k) and b (n, k) of bf16, f16, f32 "
                  "(as tf32), e4m3 or e5m2; c bf16, f16 or f32; f32 "
                  "accumulation, TMA + WGMMA",
       .tensors = {ops::input("a",
                              {DType::bf16, DType::f16, DType::f32, DType::e4m3,
                               DType::e5m2},
                              "m, k", ops::Layout::inner_contiguous),
                   ops::input_like("b", "a", "n, k",
                                   ops::Layout::inner_contiguous),
                   ops::output("c", {DType::bf16, DType::f16, DType::f32},
                               "m, n", ops::Layout::inner_contiguous)},
       .cli_shape = "m, n, k",
       .default_shape = {8192, 8192, 8192},
       .check = check,
       .special = zeros},
      {spec, gemm_kernel});
  return op;
}
TILEJIT_REGISTER_OP(gemm_op);

void gemm(const rt::TensorView &a, const rt::TensorView &b,
          const rt::TensorView &c, CUstream stream) {
  gemm_op().call({a, b, c}, {}, stream);
}

} // namespace tilejit::gemm
