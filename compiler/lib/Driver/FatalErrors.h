//===- FatalErrors.h - LLVM/MLIR fatal errors as failures, not exits -----===//
#ifndef TILEJIT_DRIVER_FATALERRORS_H
#define TILEJIT_DRIVER_FATALERRORS_H

#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>

namespace tilejit {

/// Runs `fn`. A fatal error that LLVM or MLIR reports inside it (through
/// `report_fatal_error`, e.g. "PTX version 6.0 does not support target
/// 'sm_90a'") would end the whole process with exit(1) or abort(); here it
/// stops `fn` instead: the call returns false with LLVM's reason.
///
/// How: a fatal-error handler, installed once for the process, unwinds from
/// the reporting frame to this call when the reporting thread is inside one
/// (elsewhere it prints LLVM's usual "LLVM ERROR: ..." and lets LLVM exit as
/// it would). LLVM's frames between the two run no destructors, so what they
/// owned leaks; the caller discards the state that `fn` worked on.
bool runCatchingFatalErrors(llvm::function_ref<void()> fn, std::string &reason);

} // namespace tilejit

#endif // TILEJIT_DRIVER_FATALERRORS_H
