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

/// Milliseconds per call of `fn`, measured without the host's launch cost:
/// runs `fn(stream, call)` `warmup` + 1 times on a stream of its own (so
/// that JIT compiles and uploads happen before the capture), captures `iters`
/// calls into a CUDA graph and times `replays` replays of it with events;
/// returns the median replay divided by `iters`. `call` counts the calls
/// from 0 (warm-up first, then the captured ones), so that `fn` can rotate
/// among copies of its data. Back-to-back kernels of a graph
/// start about as soon as the previous one ends, so a kernel shorter than
/// the host's launch cost is timed as the GPU runs it, not as fast as the
/// host can queue it. `fn` must queue all its work on the stream it is given:
/// work queued elsewhere is not in the graph (UserError when the graph is
/// empty), a call the capture forbids (a synchronous copy, an allocation)
/// is a DriverError naming the capture call. Makes device 0 current when the
/// thread has no current context. Throws UserError for warmup < 0, iters < 1
/// or replays < 1; exceptions from `fn` pass through.
double time_graph_ms(const std::function<void(CUstream, int)> &fn, int warmup,
                     int iters, int replays = 5);

} // namespace tilejit::rt
