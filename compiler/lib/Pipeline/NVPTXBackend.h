//===- NVPTXBackend.h - LLVM IR optimisation and NVPTX code generation ---===//
#ifndef TILEJIT_PIPELINE_NVPTXBACKEND_H
#define TILEJIT_PIPELINE_NVPTXBACKEND_H

#include "tilejit/Pipeline/Pipeline.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace llvm {
class Module;
} // namespace llvm

namespace tilejit {

/// Translates `kernels` (LLVM and NVVM dialects only) to LLVM IR, optimises
/// it and generates PTX. Reports the times of the "llvm" (translation and
/// optimisation) and "ptx" (code generation) stages, and the optimised IR.
mlir::FailureOr<std::string>
emitPTX(mlir::gpu::GPUModuleOp kernels, const PipelineOptions &options,
        llvm::function_ref<void(llvm::StringRef stage, double ms)> onTiming,
        llvm::function_ref<void(llvm::Module &)> onOptimizedIR);

} // namespace tilejit

#endif // TILEJIT_PIPELINE_NVPTXBACKEND_H
