// op_steps.h - A layer's op calls: each bound (checked) as it is added, all
// launched in order once every one has bound, so that a mistake anywhere
// throws before anything is written.
#pragma once

#include "op/op_def.h"

#include "tilejit/runtime/tensor.h"

#include <cuda.h>

#include <deque>
#include <optional>
#include <vector>

namespace tilejit::modeling {

/// Op calls bound in order, then launched in order.
class Steps {
public:
  /// `params`: the leading parameters in declaration order; the rest take
  /// their declared defaults.
  void add(const ops::OpDef &op, std::vector<rt::TensorView> tensors,
           std::vector<ops::ParamValue> params = {}) {
    Step &s = steps_.emplace_back(Step{&op, std::move(tensors),
                                       op.with_defaults(std::move(params)),
                                       std::nullopt});
    s.call.emplace(op.bind(s.tensors, s.params));
  }
  void run(CUstream stream) const {
    for (const Step &s : steps_)
      s.op->run(*s.call, stream);
  }

private:
  struct Step {
    const ops::OpDef *op;
    std::vector<rt::TensorView> tensors; // the call's spans point here
    std::vector<ops::ParamValue> params;
    std::optional<ops::Call> call;
  };
  std::deque<Step> steps_; // stable addresses
};

/// A float parameter as an op call's real.
inline double real(float v) { return static_cast<double>(v); }

/// `t` (contiguous) seen with another shape of as many elements.
inline rt::TensorView as(const rt::TensorView &t, std::vector<int64_t> shape) {
  return rt::TensorView::contiguous(t.data, t.dtype, shape);
}

} // namespace tilejit::modeling
