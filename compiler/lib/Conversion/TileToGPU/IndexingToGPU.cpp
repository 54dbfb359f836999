//===- IndexingToGPU.cpp - Block ids and coordinate fragments ------------===//
#include "Patterns.h"

#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tile;

namespace {
struct BlockIdLowering : OpConversionPattern<BlockIdOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(BlockIdOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    static constexpr gpu::Dimension dims[] = {
        gpu::Dimension::x, gpu::Dimension::y, gpu::Dimension::z};
    rewriter.replaceOpWithNewOp<gpu::BlockIdOp>(op, dims[op.getDim()]);
    return success();
  }
};
/// tile.iota: each slot's coordinate along the dimension.
struct IotaLowering : OpConversionPattern<IotaOp> {
  IotaLowering(const TypeConverter &tc, MLIRContext *ctx,
               const ThreadMapping &mapping)
      : OpConversionPattern(tc, ctx), mapping(mapping) {}

  LogicalResult
  matchAndRewrite(IotaOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto vecType = dyn_cast_or_null<VectorType>(
        getTypeConverter()->convertType(op.getType()));
    if (!vecType)
      return rewriter.notifyMatchFailure(op, "fragment type not convertible");
    Location loc = op.getLoc();
    SmallVector<Value> elements;
    for (int64_t slot = 0; slot < vecType.getNumElements(); ++slot) {
      SlotCoords at =
          slotCoords(rewriter, loc, getLayout(op.getType()),
                     op.getType().getShape(), mapping.threadId, slot);
      elements.push_back(arith::IndexCastOp::create(
          rewriter, loc, vecType.getElementType(), at.coords[op.getDim()]));
    }
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, vecType, elements);
    return success();
  }

  ThreadMapping mapping;
};
} // namespace

void mlir::tile::populateIndexingToGPUPatterns(const TypeConverter &converter,
                                               const ThreadMapping &mapping,
                                               RewritePatternSet &patterns) {
  patterns.add<BlockIdLowering>(converter, patterns.getContext());
  patterns.add<IotaLowering>(converter, patterns.getContext(), mapping);
}
