//===- IndexingToGPU.cpp - tile.block_id to gpu.block_id -----------------===//
#include "Patterns.h"

#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

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
} // namespace

void mlir::tile::populateIndexingToGPUPatterns(const TypeConverter &converter,
                                               RewritePatternSet &patterns) {
  patterns.add<BlockIdLowering>(converter, patterns.getContext());
}
