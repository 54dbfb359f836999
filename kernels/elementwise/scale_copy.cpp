// scale_copy.cpp - scale_copy declared: out = x * scale, f32, any strides;
// one block a 32 x 128 tile.
#include "elementwise/scale_copy.h"
#include "elementwise/reference.h"

#include "op/op.h"

namespace tilejit::elementwise {

static ScaleCopySpec spec(const ops::Call &c) {
  ScaleCopySpec s;
  if (ops::rows_aligned(c.tensor("x"), 16) &&
      ops::rows_aligned(c.tensor("out"), 16))
    s.vector_bytes = 16;
  return s;
}

static std::vector<ref::HostTensor> reference(const ops::HostCall &c) {
  const ref::HostTensor &x = c.tensor("x");
  ref::HostTensor out = ref::HostTensor::zeros(DType::f32, x.shape());
  scale_copy_ref(x.data<float>(), x.strides().data(), out.data<float>(),
                 out.strides().data(), x.size(0), x.size(1),
                 static_cast<float>(c.real("scale")));
  return {out};
}

const ops::OpDef &scale_copy_op() {
  static const ops::OpDef op = ops::make_op<ScaleCopySpec>(
      {.name = "scale_copy",
       .summary = "out = x * scale over a strided 2-D f32 tensor (foundation "
                  "kernel)",
       .tensors = {ops::input("x", {DType::f32}, "M, N"),
                   ops::output("out", {DType::f32}, "M, N",
                               ops::Layout::strided)},
       .params = {ops::real("scale", 1.5, "the factor")},
       .cli_shape = "M, N",
       .default_shape = {8192, 8192},
       .reference = reference},
      {spec, scale_copy_kernel});
  return op;
}
TILEJIT_REGISTER_OP(scale_copy_op);

void scale_copy(const rt::TensorView &x, const rt::TensorView &out, float scale,
                CUstream stream) {
  scale_copy_op().call({x, out}, {static_cast<double>(scale)}, stream);
}

} // namespace tilejit::elementwise
