//===- ShuffleToGPU.cpp - tile.shuffle_xor to warp shuffles ---------------===//
//
// tile-assign-layouts made the shuffled dimension's coordinate the thread's
// lane bits, so element i xor mask of a slot is the same slot of lane
// (lane xor mask): one gpu.shuffle xor per slot; and the element at `lane`
// of a group of S coordinates is the same slot of lane `lane` of a segment
// of S lanes: one gpu.shuffle idx of width S per slot.
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

/// One gpu.shuffle of `mode` per slot; `offsetAndWidth` gives its offset
/// (mask or lane) and width.
template <typename OpTy, gpu::ShuffleMode mode>
struct ShuffleLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;

  static std::pair<int64_t, int64_t> offsetAndWidth(OpTy op);

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto vecType = dyn_cast<VectorType>(adaptor.getSource().getType());
    if (!vecType)
      return rewriter.notifyMatchFailure(op, "fragment type not converted");
    auto [offsetValue, widthValue] = offsetAndWidth(op);
    Value offset = arith::ConstantIntOp::create(rewriter, loc, offsetValue, 32);
    Value width = arith::ConstantIntOp::create(rewriter, loc, widthValue, 32);
    Value result = adaptor.getSource();
    for (int64_t slot = 0; slot < vecType.getNumElements(); ++slot) {
      Value mine =
          vector::ExtractOp::create(rewriter, loc, adaptor.getSource(), slot);
      Value theirs =
          gpu::ShuffleOp::create(rewriter, loc, mine, offset, width, mode)
              .getShuffleResult();
      result = vector::InsertOp::create(rewriter, loc, theirs, result, slot);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

template <>
std::pair<int64_t, int64_t>
ShuffleLowering<ShuffleXorOp, gpu::ShuffleMode::XOR>::offsetAndWidth(
    ShuffleXorOp op) {
  return {static_cast<int64_t>(op.getMask()), 32};
}

template <>
std::pair<int64_t, int64_t>
ShuffleLowering<ShuffleIdxOp, gpu::ShuffleMode::IDX>::offsetAndWidth(
    ShuffleIdxOp op) {
  int64_t size = op.getSource().getType().getDimSize(op.getDim());
  return {static_cast<int64_t>(op.getLane()), std::min<int64_t>(size, 32)};
}

} // namespace

void mlir::tile::populateShuffleToGPUPatterns(const TypeConverter &converter,
                                              RewritePatternSet &patterns) {
  patterns.add<ShuffleLowering<ShuffleXorOp, gpu::ShuffleMode::XOR>,
               ShuffleLowering<ShuffleIdxOp, gpu::ShuffleMode::IDX>>(
      converter, patterns.getContext());
}
