// scoped_context.h - Internal: a context made current for a destructor.
#pragma once

#include "tilejit/runtime/driver.h"

namespace tilejit::rt::detail {

/// For destructors: never throws, ignores driver errors. `driver` is null when
/// there is no driver, and then nothing is done.
class ScopedContext {
public:
  ScopedContext(const Driver *driver, CUcontext context) noexcept
      : driver_(driver) {
    if (!driver_ || driver_->cuCtxGetCurrent(&saved_) != CUDA_SUCCESS)
      return;
    if (saved_ != context && driver_->cuCtxSetCurrent(context) == CUDA_SUCCESS)
      switched_ = true;
  }
  ~ScopedContext() {
    if (switched_)
      driver_->cuCtxSetCurrent(saved_);
  }
  ScopedContext(const ScopedContext &) = delete;
  ScopedContext &operator=(const ScopedContext &) = delete;

private:
  const Driver *driver_;
  CUcontext saved_ = nullptr;
  bool switched_ = false;
};

} // namespace tilejit::rt::detail
