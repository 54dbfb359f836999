// timer.h - Timing GPU work with CUDA events.
#pragma once

#include <cuda.h>

#include <functional>

namespace tilejit::rt {

/// Mean milliseconds per call of `fn`: runs it `warmup` times, then records
/// an event on `s`, runs it `iters` times, records another and waits for it.
/// `fn` must queue its work on `s` (kDefaultStream allowed). Makes device 0
/// current when the thread has no current context. Throws UserError for
/// warmup < 0 or iters < 1; exceptions from `fn` pass through.
double time_ms(const std::function<void()> &fn, CUstream s, int warmup,
               int iters);

} // namespace tilejit::rt
