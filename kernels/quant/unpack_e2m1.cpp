// unpack_e2m1.cpp - unpack_from_e2m1fn_x2 declared: int8/uint8 (M, N) of
// packed fp4 to f32/f16/bf16 (M, 2N), seen flat; 256 threads, 8 bytes a
// thread. The C++ entry takes any rank (leading dimensions folded into M).
#include "quant/unpack_e2m1.h"
#include "quant/reference.h"

#include "op/op.h"

#include <algorithm>

namespace tilejit::quant {

static UnpackE2m1Spec spec(const ops::Call &c) {
  UnpackE2m1Spec s;
  s.out_dtype = c.tensor("out").dtype;
  s.vector_bytes =
      c.tensor("x").data % 16 == 0 && c.tensor("out").data % 16 == 0 ? 16 : 0;
  return s;
}

/// Both tensors as one dimension: x's bytes, out's values.
static void flat(const ops::Call &c, const UnpackE2m1Spec &,
                 ops::KernelArgs &args) {
  const rt::TensorView &x = c.tensor("x"), &out = c.tensor("out");
  const int64_t nx[1] = {x.numel()}, nout[1] = {out.numel()};
  args.tensor("x", rt::TensorView::contiguous(x.data, DType::u8, nx));
  args.tensor("out", rt::TensorView::contiguous(out.data, out.dtype, nout));
}

const ops::OpDef &unpack_from_e2m1fn_x2_op() {
  static const ops::OpDef op = ops::make_op<UnpackE2m1Spec>(
      {.name = "unpack_from_e2m1fn_x2",
       .summary = "packed fp4 e2m1 (M, N) int8/uint8 to f32, f16 or bf16 "
                  "(M, 2N), low nibble first, exact",
       .tensors = {ops::input("x", {DType::i8, DType::u8}, "M, N",
                              ops::Layout::contiguous),
                   ops::output("out", {DType::f32, DType::f16, DType::bf16}, "",
                               ops::Layout::contiguous,
                               "(M, 2N) of the values")},
       .cli_shape = "M, N",
       .default_shape = {8192, 3584},
       .shape_of =
           [](std::string_view, const ops::ShapeArgs &a) {
             const int64_t m = a.dim("M"), n = 2 * a.dim("N");
             return ops::TensorShape{a.dtype("out"), {m, n}, {n, 1}};
           },
       .reference =
           [](const ops::HostCall &c) {
             return std::vector{unpack_from_e2m1fn_x2_ref(
                 c.tensor("x"), c.output("out").dtype)};
           }},
      {spec, unpack_e2m1_kernel, flat});
  return op;
}
TILEJIT_REGISTER_OP(unpack_from_e2m1fn_x2_op);

void unpack_from_e2m1fn_x2(const rt::TensorView &x, const rt::TensorView &out,
                           CUstream stream) {
  // Any rank: the leading dimensions fold into M (both are contiguous; the
  // op checks that out is x with the last dimension doubled).
  auto as_2d = [](const rt::TensorView &t) {
    if (t.rank < 1)
      return t;
    const int64_t last = t.shape[t.rank - 1];
    const int64_t shape[2] = {last == 0 ? 0 : t.numel() / last, last};
    const int64_t strides[2] = {last, 1};
    return t.rank == 2
               ? t
               : rt::TensorView::strided(t.data, t.dtype, shape, strides);
  };
  if (x.rank != out.rank || x.rank < 1 ||
      !std::equal(x.shape.begin(), x.shape.begin() + x.rank - 1,
                  out.shape.begin()) ||
      out.shape[out.rank - 1] != 2 * x.shape[x.rank - 1])
    throw UserError(fmt::format(
        "unpack_from_e2m1fn_x2: argument 'out' is {}; requires the shape of "
        "x = {} with the last dimension doubled",
        out.to_string(), x.to_string()));
  unpack_from_e2m1fn_x2_op().call({as_2d(x), as_2d(out)}, {}, stream);
}

} // namespace tilejit::quant
