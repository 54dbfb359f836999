//===- KernelModule.h - The gpu.module every lowered kernel goes into ----===//
#ifndef TILEJIT_CONVERSION_KERNELMODULE_H
#define TILEJIT_CONVERSION_KERNELMODULE_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tile {

/// `gpu.module @tilejit_kernels` of `module`, created (and the module marked
/// as a GPU container) on first use.
gpu::GPUModuleOp getOrCreateKernelModule(ModuleOp module);

} // namespace mlir::tile

#endif // TILEJIT_CONVERSION_KERNELMODULE_H
