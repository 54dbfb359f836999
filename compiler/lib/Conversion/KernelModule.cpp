//===- KernelModule.cpp - The gpu.module every lowered kernel goes into --===//
#include "KernelModule.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

gpu::GPUModuleOp mlir::tile::getOrCreateKernelModule(ModuleOp module) {
  static constexpr StringLiteral kName = "tilejit_kernels";
  if (auto existing = module.lookupSymbol<gpu::GPUModuleOp>(kName))
    return existing;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  b.getUnitAttr());
  return gpu::GPUModuleOp::create(b, module.getLoc(), kName);
}
