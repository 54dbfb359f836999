//===- Pipeline.h - The one place that orders tilejit's passes -----------===//
#ifndef TILEJIT_PIPELINE_PIPELINE_H
#define TILEJIT_PIPELINE_PIPELINE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <functional>
#include <string>

namespace tilejit {

/// Target and code-generation settings of one compile.
struct PipelineOptions {
  std::string chip = "sm_90a";
  std::string features = "+ptx80";
  int optLevel = 3;
};

/// Why `options` cannot be compiled for -- a chip or a feature that LLVM's
/// NVPTX target does not know, an optimisation level out of range -- as a
/// named error; "" when they can. (LLVM itself would only warn and go on.)
std::string checkTargetOptions(const PipelineOptions &options);

/// Drops this thread's cached NVPTX target machines without destroying them:
/// after an LLVM fatal error inside a compile, their state is unknown.
void discardTargetMachines();

/// Called after each stage with its name ("tile", "gpu", "mlir", "llvm",
/// "ptx") and printed form; `wantsText` says whether the text is needed (so
/// printing is skipped when nobody asks).
struct PipelineObserver {
  std::function<bool(llvm::StringRef stage)> wantsText;
  std::function<void(llvm::StringRef stage, llvm::StringRef text)> onText;
  std::function<void(llvm::StringRef stage, double ms)> onTiming;
};

/// Lowers a verified module of tile kernels to PTX, in place:
///   tile   -> convert-tile-to-gpu                              -> gpu
///   gpu    -> scf-to-cf, strided metadata, nvvm target, gpu-to-nvvm, ... ->
///   mlir mlir   -> LLVM IR (translation + NVPTX optimisation)      -> llvm
///   llvm   -> NVPTX code generation                            -> ptx
/// Diagnostics go to the context's handler; failure() means one was emitted.
mlir::FailureOr<std::string> lowerToPTX(mlir::ModuleOp module,
                                        const PipelineOptions &options,
                                        const PipelineObserver &observer);

} // namespace tilejit

#endif // TILEJIT_PIPELINE_PIPELINE_H
