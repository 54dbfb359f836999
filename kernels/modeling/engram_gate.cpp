// engram_gate.cpp - The Engram gate layer on the GPU: fused_weight and
// engram_gate_fwd forward; engram_gate_bwd and grad_w_reduce backward.
#include "modeling/engram_gate.h"

#include "engram/engram_gate.h"
#include "engram/fused_weight.h"
#include "engram/grad_w_reduce.h"

#include "tilejit/error.h"

namespace tilejit::modeling {

void engram_gate_forward(const rt::TensorView &x, const rt::TensorView &k,
                         const rt::TensorView &v,
                         const rt::TensorView &weight_hidden,
                         const rt::TensorView &weight_embed,
                         const rt::TensorView &out,
                         const EngramGateSavedViews &saved, float clamp_value,
                         float eps, CUstream stream,
                         const rt::TensorView &image_token_mask) {
  if (out.data != 0 && out.data == x.data)
    throw UserError("engram_gate_forward: argument 'out' is 'x'; requires "
                    "another buffer (the backward reads x)");
  // Both calls validated before either launches.
  const rt::TensorView fused[] = {weight_hidden, weight_embed,
                                  saved.weight_fused};
  const rt::TensorView gate[] = {x,
                                 k,
                                 v,
                                 saved.weight_fused,
                                 image_token_mask,
                                 out,
                                 saved.dot,
                                 saved.gate_score,
                                 saved.rstd_x,
                                 saved.rstd_k};
  const ops::OpDef &fw = engram::fused_weight_op();
  const ops::OpDef &fwd = engram::engram_gate_fwd_op();
  const std::vector<ops::ParamValue> params = fwd.with_defaults(
      {static_cast<double>(eps), static_cast<double>(clamp_value)});
  const ops::Call first = fw.bind(fused, {}), second = fwd.bind(gate, params);
  fw.run(first, stream);
  fwd.run(second, stream);
}

void engram_gate_backward(
    const rt::TensorView &grad_out, const rt::TensorView &x,
    const rt::TensorView &k, const rt::TensorView &v,
    const rt::TensorView &weight_hidden, const rt::TensorView &weight_embed,
    const EngramGateSavedViews &saved, const rt::TensorView &grad_x,
    const rt::TensorView &grad_k, const rt::TensorView &grad_v,
    const rt::TensorView &grad_w_partial,
    const rt::TensorView &grad_weight_hidden,
    const rt::TensorView &grad_weight_embed, float clamp_value, CUstream stream,
    const rt::TensorView &image_token_mask) {
  const rt::TensorView bwd[] = {grad_out,
                                x,
                                k,
                                v,
                                saved.weight_fused,
                                saved.dot,
                                saved.gate_score,
                                saved.rstd_x,
                                saved.rstd_k,
                                image_token_mask,
                                grad_x,
                                grad_k,
                                grad_v,
                                grad_w_partial};
  const ops::OpDef &gate = engram::engram_gate_bwd_op();
  const std::vector<ops::ParamValue> bwd_params = gate.with_defaults(
      {static_cast<double>(clamp_value),
       grad_w_partial.rank > 0 ? grad_w_partial.shape[0] : int64_t{0}});
  const rt::TensorView reduce[] = {grad_w_partial,    weight_hidden,
                                   weight_embed,      grad_weight_hidden,
                                   grad_weight_embed, grad_weight_hidden,
                                   grad_weight_embed};
  const ops::OpDef &sum = engram::grad_w_reduce_op();
  const ops::Call first = gate.bind(bwd, bwd_params),
                  second = sum.bind(reduce, {});
  gate.run(first, stream);
  sum.run(second, stream);
}

} // namespace tilejit::modeling
