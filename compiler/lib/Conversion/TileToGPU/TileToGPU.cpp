//===- TileToGPU.cpp - Turn tile kernels into gpu.func kernels -----------===//
//
// The pass driver of the conversion: moves each kernel into the module's
// gpu.module, checks that its fragments have layouts, gives transposes,
// layout conversions and cross-warp reductions their shared buffers, and
// runs the patterns of the other files of this folder.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"

#include "../KernelModule.h"

#include "tilejit/Conversion/Passes.h"
#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace mlir::tile {
#define GEN_PASS_DEF_CONVERTTILETOGPU
#include "tilejit/Conversion/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

/// Every fragment must have a layout (from tile-assign-layouts).
static LogicalResult checkLayouts(Operation *kernel) {
  WalkResult result = kernel->walk([&](Operation *op) {
    for (Type type :
         llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes())) {
      auto fragment = dyn_cast<RankedTensorType>(type);
      if (!fragment || getLayout(fragment))
        continue;
      op->emitOpError() << "fragment " << fragment
                        << " has no layout; run tile-assign-layouts first";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// Every gemm left (outside a pipelined loop) must fit mma.sync.
static LogicalResult checkGemms(Operation *kernel) {
  WalkResult result = kernel->walk([&](GemmOp gemm) {
    return failed(checkMmaGemm(gemm)) ? WalkResult::interrupt()
                                      : WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// Whether `op` waits for every thread of the block wherever it runs: an
/// author's barrier, or an op going through a shared buffer.
static bool issuesBarrier(Operation *op) {
  if (isa<gpu::BarrierOp, TransposeOp, GemmOp>(op))
    return true;
  if (auto copy = dyn_cast<CopyOp>(op))
    return !copy.getAsync();
  if (auto reduce = dyn_cast<ReduceOp>(op))
    return static_cast<bool>(reduceBufferType(reduce));
  if (auto convert = dyn_cast<ConvertLayoutOp>(op))
    return static_cast<bool>(convertLayoutBufferType(convert));
  return false;
}

/// A transpose or reduction in a loop writes its buffer again in the next
/// step; unless another op of the loop's body waits for every thread each
/// step, it must wait first for the last step's readers.
static bool mustWaitFirst(Operation *op) {
  auto loop = op->getParentOfType<LoopLikeOpInterface>();
  if (!loop)
    return false;
  Operation *step = op;
  while (step->getParentOp() != loop.getOperation())
    step = step->getParentOp();
  return llvm::none_of(*step->getBlock(), [&](Operation &other) {
    return &other != step && issuesBarrier(&other);
  });
}

/// Bytes of a shared buffer, rounded up to the 16-byte alignment.
static int64_t bufferBytes(MemRefType type) {
  return (type.getNumElements() * type.getElementTypeBitWidth() / 8 + 15) / 16 *
         16;
}

/// The alignment a shared tile asks for (`tilejit.align`: a TMA copy's
/// destination, 128), at least 16.
static int64_t tileAlignment(AllocSharedOp tile) {
  auto align = tile->getAttrOfType<IntegerAttr>("tilejit.align");
  return std::max<int64_t>(16, align ? align.getInt() : 16);
}

/// A block's static shared memory; kernels that need more take it as
/// dynamic shared memory.
static constexpr int64_t kStaticSharedBytes = 48 * 1024;

/// The kernel's shared buffers (`bytes` in all) fit the shared memory of a
/// block of sm_90 (227 KB).
static LogicalResult checkSharedBytes(gpu::GPUFuncOp kernel, int64_t bytes) {
  constexpr int64_t kLimit = 227 * 1024;
  if (bytes <= kLimit)
    return success();
  return kernel.emitError()
         << "kernel needs " << bytes
         << " bytes of shared memory (its shared tiles and the buffers of its "
            "transposes, cross-warp reductions, layout conversions and "
            "mma.sync accumulators); a block of sm_90 has at most "
         << kLimit << " bytes";
}

/// The subviews of `view` (a pipelined loop's buffer slots) take its new
/// type's strides: their result types follow from their source's.
static void retypeViews(Value view) {
  for (Operation *user : view.getUsers()) {
    auto sub = dyn_cast<memref::SubViewOp>(user);
    if (!sub || sub.getSource() != view)
      continue;
    sub.getResult().setType(memref::SubViewOp::inferRankReducedResultType(
        sub.getType().getShape(), cast<MemRefType>(view.getType()),
        sub.getMixedOffsets(), sub.getMixedSizes(), sub.getMixedStrides()));
    retypeViews(sub.getResult());
  }
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
  // ptxas's .minnctapersm: it keeps the registers within what that many
  // blocks of `threads` leave each.
  if (auto blocks =
          func->getAttrOfType<IntegerAttr>(TileDialect::getMinBlocksAttrName()))
    kernel->setAttr("nvvm.minctasm", blocks);
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto align = func.getArgAttr(i, TileDialect::getAlignAttrName()))
      kernel.setArgAttr(i, TileDialect::getAlignAttrName(), align);
  // The tensor maps tile-lower-pipelined appended: their ABI lines and
  // count (tile-tensor-map-params passes them by value).
  for (StringRef name : {"tilejit.abi_extra", "tilejit.tensor_maps"})
    if (Attribute attr = func->getAttr(name))
      kernel->setAttr(name, attr);
  kernel.getBody().getBlocks().clear();
  kernel.getBody().takeBody(func.getBody());
  // A programmatic dependent launch: wait for the grid before, then let the
  // grid after launch; where tile.grid_wait stands, else before anything
  // else. The grid after launches only once this one's wait is over, so
  // that whatever it reads before its own wait was written two grids back.
  if (func->hasAttr(TileDialect::getProgrammaticAttrName())) {
    Block &body = kernel.getBody().front();
    auto marks = body.getOps<GridWaitOp>();
    OpBuilder at = OpBuilder::atBlockBegin(&body);
    Location loc = func.getLoc();
    GridWaitOp mark = marks.empty() ? GridWaitOp() : *marks.begin();
    if (mark) {
      at.setInsertionPoint(mark);
      loc = mark.getLoc();
    }
    NVVM::GriddepcontrolOp::create(at, loc, NVVM::GridDepActionKind::wait);
    NVVM::GriddepcontrolOp::create(at, loc,
                                   NVVM::GridDepActionKind::launch_dependents);
    if (mark)
      mark.erase();
  }
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
      if (failed(checkLayouts(func)) || failed(checkGemms(func)))
        return signalPassFailure();
      gpu::GPUFuncOp kernel = outlineKernel(func, gpuModule, threads);
      if (failed(lowerFragments(kernel, threads)))
        return signalPassFailure();
      // The argument promises were used; no later stage reads them.
      for (unsigned i = 0; i < kernel.getNumArguments(); ++i)
        kernel.removeArgAttr(i, TileDialect::getAlignAttrName());
    }
  }

  LogicalResult lowerFragments(gpu::GPUFuncOp kernel, int64_t threads) {
    MLIRContext *ctx = &getContext();
    OpBuilder b = OpBuilder::atBlockBegin(&kernel.getBody().front());
    ThreadMapping mapping{threads, gpu::ThreadIdOp::create(b, kernel.getLoc(),
                                                           gpu::Dimension::x)};

    // Transposes, layout conversions, reductions across warps, scans and
    // mma.sync gemms go through shared buffers; the author's shared tiles
    // become buffers too. 16-byte aligned: they are read and written in
    // 16-byte vectors. Conversions, scans and gemms start with a barrier and
    // hold their
    // buffer only until their end: they share one scratch buffer, as large
    // as the largest. Transposes and reductions write without waiting and
    // keep buffers of their own.
    llvm::DenseMap<Operation *, Value> buffers;
    SmallVector<std::pair<Operation *, MemRefType>> owned, transient;
    SmallVector<AllocSharedOp> tiles;
    kernel.walk([&](Operation *op) {
      if (auto tile = dyn_cast<AllocSharedOp>(op))
        tiles.push_back(tile);
      MemRefType type;
      if (auto transpose = dyn_cast<TransposeOp>(op))
        type = transposeBufferType(transpose);
      if (auto reduce = dyn_cast<ReduceOp>(op))
        type = reduceBufferType(reduce);
      if (auto convert = dyn_cast<ConvertLayoutOp>(op))
        type = convertLayoutBufferType(convert);
      if (auto gemm = dyn_cast<GemmOp>(op))
        type = gemmBufferType(gemm);
      if (auto scan = dyn_cast<ScanOp>(op))
        type = scanBufferType(scan);
      if (!type)
        return;
      if (isa<ConvertLayoutOp, GemmOp, ScanOp>(op)) {
        transient.push_back({op, type});
        return;
      }
      owned.push_back({op, type});
      if (mustWaitFirst(op))
        mapping.waitFirst.insert(op);
    });
    auto space = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
    MemRefType scratchType;
    if (!transient.empty()) {
      int64_t bytes = 0;
      for (auto &[op, type] : transient)
        bytes = std::max(bytes, bufferBytes(type));
      scratchType = MemRefType::get({bytes}, b.getI8Type(),
                                    MemRefLayoutAttrInterface{}, space);
    }
    // Each tile with its rows padded as tile-assign-shared-layouts chose.
    SmallVector<MemRefType> tileTypes;
    for (AllocSharedOp tile : tiles) {
      MemRefType type = tile.getType();
      SmallVector<int64_t> shape(type.getShape());
      shape.back() += tile.getRowPad().value_or(0);
      tileTypes.push_back(MemRefType::get(shape, type.getElementType(),
                                          MemRefLayoutAttrInterface{},
                                          type.getMemorySpace()));
    }
    // Each buffer's offset, in the order they are allocated below, at its
    // alignment; more alignment than 16 (TMA destinations) also needs room
    // to realign dynamic shared memory, whose base is only 16-byte aligned.
    int64_t total = 0, widest = 16;
    SmallVector<int64_t> offsets;
    auto place = [&](MemRefType type, int64_t align) {
      offsets.push_back((total + align - 1) / align * align);
      total = offsets.back() + bufferBytes(type);
      widest = std::max(widest, align);
    };
    for (auto &[op, type] : owned)
      place(type, 16);
    if (scratchType)
      place(scratchType, 16);
    for (auto [tile, type] : llvm::zip(tiles, tileTypes))
      place(type, tileAlignment(tile));
    const int64_t laidOut = total;
    if (laidOut > kStaticSharedBytes && widest > 16)
      total += widest - 16;
    if (failed(checkSharedBytes(kernel, total)))
      return failure();

    // Up to 48 KB: static buffers (workgroup attributions). Beyond, views
    // of the block's dynamic shared memory, realigned to the widest
    // alignment, whose size the kernel reports (tilejit.shared_bytes) for
    // the launch to ask for.
    Value dynamic, shift;
    const int64_t *offset = offsets.begin();
    if (laidOut > kStaticSharedBytes) {
      Location loc = kernel.getLoc();
      dynamic = gpu::DynamicSharedMemoryOp::create(
          b, loc,
          MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                          MemRefLayoutAttrInterface{}, space));
      kernel->setAttr("tilejit.shared_bytes", b.getI64IntegerAttr(total));
      if (widest > 16) {
        Value base =
            memref::ExtractAlignedPointerAsIndexOp::create(b, loc, dynamic);
        Value up = arith::AddIOp::create(
            b, loc, base, arith::ConstantIndexOp::create(b, loc, widest - 1));
        Value aligned = arith::AndIOp::create(
            b, loc, up, arith::ConstantIndexOp::create(b, loc, -widest));
        shift = arith::SubIOp::create(b, loc, aligned, base);
      }
    }
    auto addBuffer = [&](MemRefType type, Location loc,
                         int64_t align = 16) -> Value {
      if (dynamic) {
        Value at = arith::ConstantIndexOp::create(b, loc, *offset++);
        if (shift)
          at = arith::AddIOp::create(b, loc, at, shift);
        return memref::ViewOp::create(b, loc, type, dynamic, at, ValueRange{});
      }
      Value buffer = kernel.addWorkgroupAttribution(type, loc);
      kernel.setWorkgroupAttributionAttr(
          kernel.getNumWorkgroupAttributions() - 1,
          LLVM::LLVMDialect::getAlignAttrName(), b.getI64IntegerAttr(align));
      return buffer;
    };
    for (auto &[op, type] : owned)
      buffers[op] = addBuffer(type, op->getLoc());
    if (scratchType) {
      Value scratch = addBuffer(scratchType, kernel.getLoc());
      Value zero = arith::ConstantIndexOp::create(b, kernel.getLoc(), 0);
      for (auto &[op, type] : transient)
        buffers[op] = memref::ViewOp::create(b, op->getLoc(), type, scratch,
                                             zero, ValueRange{});
    }
    // Every buffer before any tile goes: `b` inserts before the first op,
    // which may be a tile.
    SmallVector<Value> tileBuffers;
    for (auto [tile, paddedType] : llvm::zip(tiles, tileTypes))
      tileBuffers.push_back(
          addBuffer(paddedType, tile.getLoc(), tileAlignment(tile)));
    for (auto [tile, paddedType, buffer] :
         llvm::zip(tiles, tileTypes, tileBuffers)) {
      MemRefType type = tile.getType();
      if (paddedType == type) {
        tile.getResult().replaceAllUsesWith(buffer);
        tile.erase();
        continue;
      }
      // An mma.sync operand: rows padded, the author's view a subview
      // (and the views of it, a pipelined loop's buffers, retyped).
      ArrayRef<int64_t> shape = type.getShape();
      OpBuilder at(tile); // not `b`: it may insert before `tile`
      SmallVector<OpFoldResult> zeros(shape.size(), at.getIndexAttr(0)),
          ones(shape.size(), at.getIndexAttr(1)), sizes;
      for (int64_t size : shape)
        sizes.push_back(at.getIndexAttr(size));
      Value view = memref::SubViewOp::create(at, tile.getLoc(), buffer, zeros,
                                             sizes, ones);
      tile.getResult().replaceAllUsesWith(view);
      tile.erase();
      retypeViews(view);
    }

    TypeConverter converter;
    populateFragmentTypeConversion(converter);
    RewritePatternSet patterns(ctx);
    populateTransposeToGPUPatterns(converter, mapping, buffers, patterns);
    populateReduceToGPUPatterns(converter, mapping, buffers, patterns);
    populateShuffleToGPUPatterns(converter, mapping, patterns);
    populateConvertLayoutToGPUPatterns(converter, mapping, buffers, patterns);
    populateScanToGPUPatterns(converter, mapping, buffers, patterns);
    populateGemmToMMAPatterns(converter, mapping, buffers, patterns);
    populateCastToGPUPatterns(converter, patterns);
    populateStackToGPUPatterns(converter, patterns);
    populateIndexingToGPUPatterns(converter, mapping, patterns);
    populateMathToGPUPatterns(converter, patterns);
    populateLoadStoreToGPUPatterns(converter, mapping, patterns);
    populateCopyToGPUPatterns(converter, mapping, patterns);
    populateElementwiseToGPUPatterns(converter, patterns);

    ConversionTarget target(*ctx);
    target.addIllegalDialect<TileDialect>();
    target.addLegalDialect<gpu::GPUDialect, scf::SCFDialect,
                           vector::VectorDialect, memref::MemRefDialect,
                           NVVM::NVVMDialect, nvgpu::NVGPUDialect,
                           LLVM::LLVMDialect>();
    // Every math op, scalars too: GPUToNVVM would call libdevice.
    target.addIllegalDialect<math::MathDialect>();
    target.markUnknownOpDynamicallyLegal(
        [&](Operation *op) { return converter.isLegal(op); });
    // Loops and ifs carrying fragments carry their vectors.
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         target);
    return applyPartialConversion(kernel, target, std::move(patterns));
  }
};
} // namespace
