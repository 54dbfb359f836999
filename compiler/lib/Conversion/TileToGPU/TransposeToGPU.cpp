//===- TransposeToGPU.cpp - tile.transpose through shared memory ---------===//
//
// Each thread stores its chunks of the source fragment into the transpose's
// own padded shared buffer (one element a store), the block synchronises,
// and each thread loads its chunks of the result in the transposed order.
// One word of padding a row makes the column reads of a warp fall into
// different banks (at most two threads a bank).
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"

#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tile;

/// The last two coordinates of the element in slot `slot` of this thread.
static std::pair<Value, Value> lastTwoCoords(OpBuilder &b, Location loc,
                                             const ThreadMapping &mapping,
                                             RankedTensorType type,
                                             int64_t slot) {
  SlotCoords at = slotCoords(b, loc, getLayout(type), type.getShape(),
                             mapping.threadId, slot);
  return {at.coords[at.coords.size() - 2], at.coords.back()};
}

MemRefType mlir::tile::transposeBufferType(TransposeOp op) {
  RankedTensorType source = op.getSource().getType();
  source = RankedTensorType::get(source.getShape(), source.getElementType());
  int64_t rows = source.getDimSize(source.getRank() - 2);
  int64_t cols = source.getDimSize(source.getRank() - 1);
  int64_t bytes = std::max<int64_t>(1, source.getElementTypeBitWidth() / 8);
  int64_t pad = std::max<int64_t>(1, 4 / bytes); // one 4-byte word
  auto space =
      gpu::AddressSpaceAttr::get(op.getContext(), gpu::AddressSpace::Workgroup);
  return MemRefType::get({rows, cols + pad}, source.getElementType(),
                         MemRefLayoutAttrInterface{}, space);
}

namespace {
struct TransposeLowering : OpConversionPattern<TransposeOp> {
  TransposeLowering(const TypeConverter &tc, MLIRContext *ctx,
                    const ThreadMapping &mapping,
                    const llvm::DenseMap<Operation *, Value> &buffers)
      : OpConversionPattern(tc, ctx), mapping(mapping), buffers(buffers) {}

  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto vecType = dyn_cast_or_null<VectorType>(
        getTypeConverter()->convertType(op.getType()));
    Value buffer = buffers.lookup(op);
    if (!vecType || !buffer)
      return rewriter.notifyMatchFailure(op, "no shared buffer or vector type");
    Location loc = op.getLoc();
    const int64_t slots = vecType.getNumElements();

    for (int64_t slot = 0; slot < slots; ++slot) {
      auto [i, j] =
          lastTwoCoords(rewriter, loc, mapping, op.getSource().getType(), slot);
      Value element =
          vector::ExtractOp::create(rewriter, loc, adaptor.getSource(), slot);
      memref::StoreOp::create(rewriter, loc, element, buffer, ValueRange{i, j});
    }
    gpu::BarrierOp::create(rewriter, loc);

    SmallVector<Value> elements;
    for (int64_t slot = 0; slot < slots; ++slot) {
      auto [r, s] = lastTwoCoords(rewriter, loc, mapping, op.getType(), slot);
      elements.push_back(
          memref::LoadOp::create(rewriter, loc, buffer, ValueRange{s, r}));
    }
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, vecType, elements);
    return success();
  }

  ThreadMapping mapping;
  const llvm::DenseMap<Operation *, Value> &buffers;
};
} // namespace

void mlir::tile::populateTransposeToGPUPatterns(
    const TypeConverter &converter, const ThreadMapping &mapping,
    const llvm::DenseMap<Operation *, Value> &buffers,
    RewritePatternSet &patterns) {
  patterns.add<TransposeLowering>(converter, patterns.getContext(), mapping,
                                  buffers);
}
