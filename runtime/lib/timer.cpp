// timer.cpp - time_ms with a pair of CUDA events; time_graph_ms with
// replays of a captured CUDA graph.
#include "tilejit/runtime/timer.h"

#include "tilejit/error.h"
#include "tilejit/runtime/device.h"
#include "tilejit/runtime/driver.h"

#include "tilejit/runtime/stream.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

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

/// A captured graph and its executable form, destroyed together.
struct Graph {
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  Graph() = default;
  ~Graph() {
    const Driver *d = try_driver();
    if (!d)
      return;
    if (exec)
      d->cuGraphExecDestroy(exec);
    if (graph)
      d->cuGraphDestroy(graph);
  }
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;
};

void check_counts(const char *what, int warmup, int iters) {
  if (warmup < 0)
    throw UserError(
        fmt::format("{}: warmup is {}; it must be >= 0", what, warmup));
  if (iters < 1)
    throw UserError(
        fmt::format("{}: iters is {}; it must be >= 1", what, iters));
}

/// Captures `iters` calls of `fn(s)` into `g`. If `fn` throws, the capture is
/// ended (and its graph dropped) before the exception passes on.
void capture(const std::function<void(CUstream, int)> &fn, CUstream s,
             int first, int iters, Graph &g) {
  TILEJIT_CU_CHECK(
      cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  try {
    for (int i = 0; i < iters; ++i)
      fn(s, first + i);
  } catch (...) {
    CUgraph dropped = nullptr;
    if (driver().cuStreamEndCapture(s, &dropped) == CUDA_SUCCESS && dropped)
      driver().cuGraphDestroy(dropped);
    throw;
  }
  TILEJIT_CU_CHECK(cuStreamEndCapture(s, &g.graph));
  size_t nodes = 0;
  TILEJIT_CU_CHECK(cuGraphGetNodes(g.graph, nullptr, &nodes));
  if (nodes == 0)
    throw UserError("time_graph_ms: the function queued no work on the "
                    "stream it was given; it must launch on that stream");
  TILEJIT_CU_CHECK(cuGraphInstantiateWithFlags(&g.exec, g.graph, 0));
}

} // namespace

double time_ms(const std::function<void()> &fn, CUstream s, int warmup,
               int iters) {
  check_counts("time_ms", warmup, iters);
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

double time_graph_ms(const std::function<void(CUstream, int)> &fn, int warmup,
                     int iters, int replays) {
  check_counts("time_graph_ms", warmup, iters);
  if (replays < 1)
    throw UserError(
        fmt::format("time_graph_ms: replays is {}; it must be >= 1", replays));
  if (!fn)
    throw UserError("time_graph_ms: the function to time is empty");
  driver();
  ensure_context();
  Stream s;
  for (int i = 0; i <= warmup; ++i)
    fn(s, i);
  s.synchronize();
  Graph g;
  capture(fn, s, warmup + 1, iters, g);
  TILEJIT_CU_CHECK(cuGraphLaunch(g.exec, s)); // the graph's own warm-up
  Event start, stop;
  std::vector<float> ms(static_cast<size_t>(replays));
  for (float &m : ms) {
    TILEJIT_CU_CHECK(cuEventRecord(start.event, s));
    TILEJIT_CU_CHECK(cuGraphLaunch(g.exec, s));
    TILEJIT_CU_CHECK(cuEventRecord(stop.event, s));
    TILEJIT_CU_CHECK(cuEventSynchronize(stop.event));
    TILEJIT_CU_CHECK(cuEventElapsedTime(&m, start.event, stop.event));
  }
  std::nth_element(ms.begin(), ms.begin() + replays / 2, ms.end());
  return static_cast<double>(ms[static_cast<size_t>(replays / 2)]) / iters;
}

} // namespace tilejit::rt
