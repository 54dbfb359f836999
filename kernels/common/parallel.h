// parallel.h - Independent rows of a CPU reference on the machine's
// threads: a reference whose rows (tokens, blocks) share nothing computes
// the same values in parallel, and the biggest GPU test cases wait on their
// references (mhc_multilayer_recompute's 8192 x 4 x 2560: 32 s on one
// thread).
#pragma once

#include <cstdint>
#include <functional>

namespace tilejit::ref {

/// Calls body(begin, end) on contiguous ranges covering [0, n) once each,
/// on up to as many threads as the machine has (one range of at least
/// `grain` indices a thread; all on the caller's thread when that is one
/// range). The body must write only what its indices own, and must not
/// call cuda_expf: its recorder and table are per thread (cuda_math.h).
void parallel_ranges(int64_t n, int64_t grain,
                     const std::function<void(int64_t, int64_t)> &body);

} // namespace tilejit::ref
