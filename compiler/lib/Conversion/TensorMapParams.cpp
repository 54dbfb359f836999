//===- TensorMapParams.cpp - A kernel's tensor maps by value --------------===//
//
// The pass's description in Passes.td says what and why.
//
//===----------------------------------------------------------------------===//
#include "tilejit/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TENSORMAPPARAMS
#include "tilejit/Conversion/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;

namespace {

struct TensorMapParamsPass
    : mlir::tile::impl::TensorMapParamsBase<TensorMapParamsPass> {
  void runOnOperation() override {
    constexpr StringLiteral kCount = "tilejit.tensor_maps";
    WalkResult result = getOperation().walk([&](LLVM::LLVMFuncOp func) {
      auto count = func->getAttrOfType<IntegerAttr>(kCount);
      if (!count)
        return WalkResult::advance();
      func->removeAttr(kCount);
      const int64_t n = count.getInt(), args = func.getNumArguments();
      if (n < 0 || n > args) {
        func.emitOpError() << "has " << kCount << " = " << n << " but " << args
                           << " arguments";
        return WalkResult::interrupt();
      }
      OpBuilder b(func);
      auto map = TypeAttr::get(LLVM::LLVMArrayType::get(b.getI64Type(), 16));
      for (int64_t i = args - n; i < args; ++i) {
        if (!isa<LLVM::LLVMPointerType>(func.getArgumentTypes()[i])) {
          func.emitOpError()
              << "argument " << i << " should be a tensor map (!llvm.ptr)";
          return WalkResult::interrupt();
        }
        func.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(), map);
        func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                        b.getI64IntegerAttr(64));
        func.setArgAttr(i, "nvvm.grid_constant", b.getUnitAttr());
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
