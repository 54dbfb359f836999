// timer.cpp - time_ms with a pair of CUDA events.
#include "tilejit/runtime/timer.h"

#include "tilejit/error.h"
#include "tilejit/runtime/device.h"
#include "tilejit/runtime/driver.h"

#include <fmt/format.h>

namespace tilejit::rt {
namespace {

struct Event {
  CUevent event = nullptr;
  Event() { TILEJIT_CU_CHECK(cuEventCreate(&event, CU_EVENT_DEFAULT)); }
  ~Event() {
    if (const Driver *d = try_driver())
      d->cuEventDestroy(event);
  }
  Event(const Event &) = delete;
  Event &operator=(const Event &) = delete;
};

} // namespace

double time_ms(const std::function<void()> &fn, CUstream s, int warmup,
               int iters) {
  if (warmup < 0)
    throw UserError(
        fmt::format("time_ms: warmup is {}; it must be >= 0", warmup));
  if (iters < 1)
    throw UserError(
        fmt::format("time_ms: iters is {}; it must be >= 1", iters));
  if (!fn)
    throw UserError("time_ms: the function to time is empty");
  driver();
  ensure_context();
  Event start, stop;
  for (int i = 0; i < warmup; ++i)
    fn();
  TILEJIT_CU_CHECK(cuEventRecord(start.event, s));
  for (int i = 0; i < iters; ++i)
    fn();
  TILEJIT_CU_CHECK(cuEventRecord(stop.event, s));
  TILEJIT_CU_CHECK(cuEventSynchronize(stop.event));
  float ms = 0;
  TILEJIT_CU_CHECK(cuEventElapsedTime(&ms, start.event, stop.event));
  return static_cast<double>(ms) / iters;
}

} // namespace tilejit::rt
