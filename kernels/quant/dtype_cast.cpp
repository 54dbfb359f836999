// dtype_cast.cpp - cast declared: any contiguous f32/bf16/e4m3 tensor to
// another of the three, seen flat, optionally with stochastic rounding;
// 256 threads, 32 bytes of the wider dtype a thread.
#include "quant/dtype_cast.h"
#include "quant/reference.h"

#include "op/op.h"

#include <algorithm>

namespace tilejit::quant {

static const std::vector<DType> kDTypes = {DType::f32, DType::bf16,
                                           DType::e4m3};

static void check(const ops::Call &c) {
  if (!c.flag("stochastic_rounding"))
    return;
  const DType in = c.tensor("x").dtype, out = c.tensor("out").dtype;
  if (!((in == DType::f32 && (out == DType::bf16 || out == DType::e4m3)) ||
        (in == DType::bf16 && out == DType::e4m3)))
    throw UserError(fmt::format("cast: argument 'stochastic_rounding' is "
                                "true for {} to {}; requires f32 to bf16, f32 "
                                "to e4m3 or bf16 to e4m3",
                                name_of(in), name_of(out)));
  if (c.tensor("x").numel() % 4 != 0)
    throw UserError(fmt::format("cast: argument 'x' has {} elements; "
                                "stochastic_rounding requires a multiple of 4 "
                                "(quads)",
                                c.tensor("x").numel()));
}

static DtypeCastSpec spec(const ops::Call &c) {
  DtypeCastSpec s;
  s.in_dtype = c.tensor("x").dtype;
  s.out_dtype = c.tensor("out").dtype;
  s.stochastic = c.flag("stochastic_rounding");
  // Codes below the normals by a multiply and a conversion (an H100,
  // session 68, one process: bf16 -> e4m3 88.2 -> 68.8 us at 8192 x 7168).
  s.stochastic_convert = s.stochastic;
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
           .params = {ops::flag("stochastic_rounding", false,
                                "round with TileKernels 2.1's random bits "
                                "(f32 to bf16/e4m3, bf16 to e4m3)")},
           .cli_shape = "*",
           .default_shape = {8192, 7168},
           .check = check,
           .reference =
               [](const ops::HostCall &c) {
                 const DType to = c.output("out").dtype;
                 return std::vector{c.flag("stochastic_rounding")
                                        ? stochastic_cast_ref(c.tensor("x"), to)
                                        : dtype_cast_ref(c.tensor("x"), to)};
               }},
          {spec, dtype_cast_kernel, flat});
  return op;
}
TILEJIT_REGISTER_OP(cast_op);

void cast(const rt::TensorView &x, const rt::TensorView &out,
          bool stochastic_rounding, CUstream stream) {
  cast_op().call({x, out}, {stochastic_rounding}, stream);
}

} // namespace tilejit::quant
