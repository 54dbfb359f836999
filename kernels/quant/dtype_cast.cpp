// dtype_cast.cpp - cast declared: any contiguous f32/bf16/e4m3 tensor to
// another of the three, seen flat; 256 threads, 32 bytes of the wider dtype
// a thread.
#include "quant/dtype_cast.h"
#include "quant/reference.h"

#include "op/op.h"

#include <algorithm>

namespace tilejit::quant {

static const std::vector<DType> kDTypes = {DType::f32, DType::bf16,
                                           DType::e4m3};

static DtypeCastSpec spec(const ops::Call &c) {
  DtypeCastSpec s;
  s.in_dtype = c.tensor("x").dtype;
  s.out_dtype = c.tensor("out").dtype;
  const auto wider = std::max(size_of(s.in_dtype), size_of(s.out_dtype));
  s.per_thread = static_cast<int32_t>(32 / wider);
  s.vector_bytes =
      c.tensor("x").data % 16 == 0 && c.tensor("out").data % 16 == 0 ? 16 : 0;
  return s;
}

/// Both tensors as one dimension of numel elements.
static void flat(const ops::Call &c, const DtypeCastSpec &,
                 ops::KernelArgs &args) {
  for (const char *name : {"x", "out"})
    args.flat(name, c.tensor(name));
}

const ops::OpDef &cast_op() {
  static const ops::OpDef op =
      ops::make_op<DtypeCastSpec>(
          {.name = "cast",
           .summary =
               "out = x.to(out's dtype) for f32, bf16 and e4m3 (round to "
               "nearest even, e4m3 saturating); TileKernels 2.1",
           .tensors = {ops::input("x", kDTypes, "*", ops::Layout::contiguous),
                       ops::output("out", kDTypes, "*")},
           .cli_shape = "*",
           .default_shape = {8192, 7168},
           .reference =
               [](const ops::HostCall &c) {
                 return std::vector{
                     dtype_cast_ref(c.tensor("x"), c.output("out").dtype)};
               }},
          {spec, dtype_cast_kernel, flat});
  return op;
}
TILEJIT_REGISTER_OP(cast_op);

void cast(const rt::TensorView &x, const rt::TensorView &out, CUstream stream) {
  cast_op().call({x, out}, {}, stream);
}

} // namespace tilejit::quant
