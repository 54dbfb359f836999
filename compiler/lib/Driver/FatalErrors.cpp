//===- FatalErrors.cpp - LLVM/MLIR fatal errors as failures, not exits ---===//
#include "FatalErrors.h"

#include "llvm/Support/ErrorHandling.h"

#include <cstdio>
#include <mutex>

namespace {

/// What the handler throws; caught only by runCatchingFatalErrors.
struct FatalError {
  std::string reason;
};

/// How many runCatchingFatalErrors calls this thread is inside.
thread_local int catching = 0;

void onFatalError(void *, const char *reason, bool) {
  if (catching > 0)
    throw FatalError{reason ? reason : "(no reason given)"};
  // Outside tilejit's compile: what LLVM does without a handler.
  std::fprintf(stderr, "LLVM ERROR: %s\n", reason ? reason : "");
}

} // namespace

bool tilejit::runCatchingFatalErrors(llvm::function_ref<void()> fn,
                                     std::string &reason) {
  static std::once_flag installed;
  std::call_once(installed,
                 [] { llvm::install_fatal_error_handler(onFatalError); });
  struct Depth {
    Depth() { ++catching; }
    ~Depth() { --catching; }
  } depth;
  try {
    fn();
    return true;
  } catch (FatalError &e) {
    reason = std::move(e.reason);
    return false;
  }
}
