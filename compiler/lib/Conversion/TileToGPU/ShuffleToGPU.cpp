//===- ShuffleToGPU.cpp - tile.shuffle_xor to warp shuffles ---------------===//
//
// tile-assign-layouts made the shuffled dimension's coordinate the thread's
// lane bits, so element i xor mask of a slot is the same slot of lane
// (lane xor mask): one gpu.shuffle xor per slot.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"

#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

struct ShuffleXorLowering : OpConversionPattern<ShuffleXorOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ShuffleXorOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto vecType = dyn_cast<VectorType>(adaptor.getSource().getType());
    if (!vecType)
      return rewriter.notifyMatchFailure(op, "fragment type not converted");
    Value mask = arith::ConstantIntOp::create(
        rewriter, loc, static_cast<int64_t>(op.getMask()), 32);
    Value width = arith::ConstantIntOp::create(rewriter, loc, 32, 32);
    Value result = adaptor.getSource();
    for (int64_t slot = 0; slot < vecType.getNumElements(); ++slot) {
      Value mine =
          vector::ExtractOp::create(rewriter, loc, adaptor.getSource(), slot);
      Value theirs = gpu::ShuffleOp::create(rewriter, loc, mine, mask, width,
                                            gpu::ShuffleMode::XOR)
                         .getShuffleResult();
      result = vector::InsertOp::create(rewriter, loc, theirs, result, slot);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::tile::populateShuffleToGPUPatterns(const TypeConverter &converter,
                                              RewritePatternSet &patterns) {
  patterns.add<ShuffleXorLowering>(converter, patterns.getContext());
}
