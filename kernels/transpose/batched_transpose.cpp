// batched_transpose.cpp - batched_transpose and transpose declared: one
// kernel of 64 x 64 tiles, 64 bytes a thread where the columns allow.
#include "transpose/batched_transpose.h"
#include "transpose/reference.h"

#include "op/op.h"

namespace tilejit::transpose {

static BatchedTransposeSpec spec(const ops::Call &c) {
  BatchedTransposeSpec s;
  const rt::TensorView &x = c.tensor("x");
  s.dtype = x.dtype;
  if (ops::rows_aligned(x, 16) && ops::rows_aligned(c.tensor("out"), 16))
    s.vector_bytes = 16;
  // 16 bytes a thread a tile; up to 4 tiles (64 bytes a thread).
  int64_t tiles = 4 / static_cast<int64_t>(size_of(s.dtype));
  while (tiles > 1 && c.dim("Y") % (s.block_y * tiles) != 0)
    tiles /= 2;
  s.tiles_y = static_cast<int32_t>(tiles);
  return s;
}

/// x's rows: unit stride, a row stride of a multiple of 4 elements and (3-D)
/// batches X rows apart.
static void check_rows(const ops::Call &c) {
  const rt::TensorView &x = c.tensor("x");
  const int r = x.rank;
  if (x.strides[r - 1] != 1 || x.strides[r - 2] % 4 != 0)
    throw UserError(fmt::format("{}: argument 'x' is {}; requires stride[{}] "
                                "= 1 and stride[{}] a multiple of 4",
                                c.op().name, x.to_string(), r - 1, r - 2));
  if (r == 3 && x.shape[0] > 1 && x.strides[0] != x.shape[1] * x.strides[1])
    throw UserError(fmt::format("{}: argument 'x' has stride[0] = {}; "
                                "requires shape[1] * stride[1] = {}",
                                c.op().name, x.strides[0],
                                x.shape[1] * x.strides[1]));
}

static const std::vector<DType> kDTypes = {
    DType::bf16, DType::f16, DType::f32, DType::e4m3, DType::e5m2,
    DType::i8,   DType::u8,  DType::i32, DType::u32};
static const std::vector<ops::DimRule> kTiles = {{.dim = "X", .multiple = 64},
                                                 {.dim = "Y", .multiple = 64}};

const ops::OpDef &batched_transpose_op() {
  static const ops::OpDef op = ops::make_op<BatchedTransposeSpec>(
      {.name = "batched_transpose",
       .summary = "out[b, y, x] = x[b, x, y] for (B, X, Y) of 1-, 2- or "
                  "4-byte elements, X and Y multiples of 64, bit-exact",
       .tensors = {ops::input("x", kDTypes, "B, X, Y"),
                   ops::output_like("out", "x", "B, Y, X")},
       .dim_rules = kTiles,
       .cli_shape = "B, X, Y",
       .default_shape = {8, 4032, 7168},
       .check = check_rows,
       .reference =
           [](const ops::HostCall &c) {
             return std::vector{batched_transpose_ref(c.tensor("x"))};
           }},
      {spec, batched_transpose_kernel});
  return op;
}
TILEJIT_REGISTER_OP(batched_transpose_op);

/// (X, Y) and (Y, X) as batches of one.
static void batch_of_one(const ops::Call &c, const BatchedTransposeSpec &,
                         ops::KernelArgs &args) {
  for (const char *name : {"x", "out"}) {
    const rt::TensorView &t = c.tensor(name);
    const int64_t shape[3] = {1, t.shape[0], t.shape[1]};
    const int64_t strides[3] = {t.shape[0] * t.strides[0], t.strides[0],
                                t.strides[1]};
    args.tensor(name, rt::TensorView::strided(t.data, t.dtype, shape, strides));
  }
}

const ops::OpDef &transpose_op() {
  static const ops::OpDef op = ops::make_op<BatchedTransposeSpec>(
      {.name = "transpose",
       .summary = "out[y, x] = x[x, y] for (X, Y) of 1-, 2- or 4-byte "
                  "elements, X and Y multiples of 64, bit-exact",
       .tensors = {ops::input("x", kDTypes, "X, Y"),
                   ops::output_like("out", "x", "Y, X")},
       .dim_rules = kTiles,
       .cli_shape = "X, Y",
       .default_shape = {4096, 7168},
       .check = check_rows,
       .reference =
           [](const ops::HostCall &c) {
             return std::vector{transpose_ref(c.tensor("x"))};
           }},
      {spec, batched_transpose_kernel, batch_of_one});
  return op;
}
TILEJIT_REGISTER_OP(transpose_op);

void batched_transpose(const rt::TensorView &x, const rt::TensorView &out,
                       CUstream stream) {
  batched_transpose_op().call({x, out}, {}, stream);
}

void transpose(const rt::TensorView &x, const rt::TensorView &out,
               CUstream stream) {
  transpose_op().call({x, out}, {}, stream);
}

} // namespace tilejit::transpose
