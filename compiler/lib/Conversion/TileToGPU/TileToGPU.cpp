//===- TileToGPU.cpp - Turn tile kernels into gpu.func kernels -----------===//
//
// The pass driver of the conversion: moves each kernel into the module's
// gpu.module, checks that its fragments divide among its threads, and runs
// the patterns of LoadStoreToGPU.cpp and ElementwiseToGPU.cpp.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"

#include "tilejit/Conversion/Passes.h"
#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tile {
#define GEN_PASS_DEF_CONVERTTILETOGPU
#include "tilejit/Conversion/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

/// Name of the gpu.module that receives every kernel of a module.
static constexpr StringLiteral kKernelModuleName = "tilejit_kernels";

void mlir::tile::populateFragmentTypeConversion(TypeConverter &converter,
                                                const ThreadMapping &mapping) {
  converter.addConversion([](Type type) { return type; });
  int64_t threads = mapping.threads;
  converter.addConversion(
      [threads](RankedTensorType type) -> std::optional<Type> {
        if (!type.hasStaticShape() || type.getNumElements() % threads != 0)
          return std::nullopt;
        return VectorType::get({type.getNumElements() / threads},
                               type.getElementType());
      });
}

/// The widest vector (in elements) every tile access of the kernel can use:
/// each load and store must reach a tensor whose last stride is 1 and whose
/// rows are aligned (`tile.align`) to the vector's bytes, with a last fragment
/// dimension the vector divides; and every fragment must hold a whole number
/// of vectors per thread. 16 bytes at most; 1 when any access cannot.
static int64_t chooseVectorWidth(func::FuncOp kernel, int64_t threads) {
  int64_t width = 16; // elements; lowered below by the element sizes
  auto accessWidth = [&](Value memref, RankedTensorType fragment) -> int64_t {
    auto type = cast<MemRefType>(memref.getType());
    auto [strides, offset] = type.getStridesAndOffset();
    auto arg = dyn_cast<BlockArgument>(memref);
    if (strides.empty() || strides.back() != 1 || !arg)
      return 1;
    auto align = kernel.getArgAttrOfType<IntegerAttr>(
        arg.getArgNumber(), TileDialect::getAlignAttrName());
    int64_t bytes = type.getElementTypeBitWidth() / 8;
    if (!align || bytes == 0)
      return 1;
    int64_t w = std::min<int64_t>(16, align.getInt()) / bytes;
    while (w > 1 && fragment.getShape().back() % w != 0)
      w /= 2;
    return std::max<int64_t>(w, 1);
  };
  kernel.walk([&](Operation *op) {
    if (auto load = dyn_cast<LoadOp>(op))
      width = std::min(width, accessWidth(load.getSource(), load.getType()));
    if (auto store = dyn_cast<StoreOp>(op))
      width = std::min(
          width, accessWidth(store.getDest(), store.getValue().getType()));
    for (Type type : op->getResultTypes())
      if (auto fragment = dyn_cast<RankedTensorType>(type))
        while (width > 1 && fragment.getNumElements() % (threads * width) != 0)
          width /= 2;
  });
  return width;
}

/// Every fragment must split evenly among the kernel's threads.
static LogicalResult checkFragmentsDivide(Operation *kernel, int64_t threads) {
  WalkResult result = kernel->walk([&](Operation *op) {
    for (Type type : op->getResultTypes()) {
      auto fragment = dyn_cast<RankedTensorType>(type);
      if (!fragment || fragment.getNumElements() % threads == 0)
        continue;
      op->emitError() << "fragment " << fragment << " has "
                      << fragment.getNumElements()
                      << " elements; requires a multiple of the kernel's "
                      << threads << " threads";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

static gpu::GPUModuleOp getOrCreateKernelModule(ModuleOp module) {
  if (auto existing = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName))
    return existing;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  b.getUnitAttr());
  return gpu::GPUModuleOp::create(b, module.getLoc(), kKernelModuleName);
}

/// Moves the body of `func` into a new gpu.func kernel of `gpuModule`.
static gpu::GPUFuncOp
outlineKernel(func::FuncOp func, gpu::GPUModuleOp gpuModule, int64_t threads) {
  OpBuilder b = OpBuilder::atBlockEnd(gpuModule.getBody());
  auto kernel = gpu::GPUFuncOp::create(b, func.getLoc(), func.getName(),
                                       func.getFunctionType());
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  kernel.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({static_cast<int32_t>(threads), 1, 1}));
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto align = func.getArgAttr(i, TileDialect::getAlignAttrName()))
      kernel.setArgAttr(i, TileDialect::getAlignAttrName(), align);
  kernel.getBody().getBlocks().clear();
  kernel.getBody().takeBody(func.getBody());
  kernel.walk([&](func::ReturnOp ret) {
    OpBuilder rb(ret);
    gpu::ReturnOp::create(rb, ret.getLoc());
    ret.erase();
  });
  func.erase();
  return kernel;
}

namespace {
struct ConvertTileToGPUPass
    : mlir::tile::impl::ConvertTileToGPUBase<ConvertTileToGPUPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> kernels;
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(TileDialect::getThreadsAttrName()))
        kernels.push_back(func);
    if (kernels.empty())
      return;
    gpu::GPUModuleOp gpuModule = getOrCreateKernelModule(module);
    for (func::FuncOp func : kernels) {
      int64_t threads =
          cast<IntegerAttr>(func->getAttr(TileDialect::getThreadsAttrName()))
              .getInt();
      if (failed(checkFragmentsDivide(func, threads)))
        return signalPassFailure();
      int64_t width = chooseVectorWidth(func, threads);
      gpu::GPUFuncOp kernel = outlineKernel(func, gpuModule, threads);
      if (failed(lowerFragments(kernel, threads, width)))
        return signalPassFailure();
      // The argument promises were used; no later stage reads them.
      for (unsigned i = 0; i < kernel.getNumArguments(); ++i)
        kernel.removeArgAttr(i, TileDialect::getAlignAttrName());
    }
  }

  LogicalResult lowerFragments(gpu::GPUFuncOp kernel, int64_t threads,
                               int64_t width) {
    MLIRContext *ctx = &getContext();
    OpBuilder b = OpBuilder::atBlockBegin(&kernel.getBody().front());
    ThreadMapping mapping{
        threads, gpu::ThreadIdOp::create(b, kernel.getLoc(), gpu::Dimension::x),
        width};

    // Every transpose gets a shared buffer of its own.
    llvm::DenseMap<Operation *, Value> buffers;
    kernel.walk([&](TransposeOp op) {
      buffers[op] =
          kernel.addWorkgroupAttribution(transposeBufferType(op), op.getLoc());
    });

    TypeConverter converter;
    populateFragmentTypeConversion(converter, mapping);
    RewritePatternSet patterns(ctx);
    populateTransposeToGPUPatterns(converter, mapping, buffers, patterns);
    populateIndexingToGPUPatterns(converter, patterns);
    populateLoadStoreToGPUPatterns(converter, mapping, patterns);
    populateElementwiseToGPUPatterns(converter, patterns);

    ConversionTarget target(*ctx);
    target.addIllegalDialect<TileDialect>();
    target.addLegalDialect<gpu::GPUDialect, scf::SCFDialect,
                           vector::VectorDialect, memref::MemRefDialect>();
    target.markUnknownOpDynamicallyLegal(
        [&](Operation *op) { return converter.isLegal(op); });
    return applyPartialConversion(kernel, target, std::move(patterns));
  }
};
} // namespace
