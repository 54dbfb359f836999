//===- ShuffleToGPU.cpp - tile.shuffle_* and match_any to warp ops --------===//
//
// tile-assign-layouts made the shuffled dimension's coordinate the thread's
// lane bits, so element i xor mask of a slot is the same slot of lane
// (lane xor mask): one gpu.shuffle xor per slot; and the element at `lane`
// of a group of S coordinates is the same slot of lane (laneid - laneid mod
// S + lane): one gpu.shuffle idx per slot. Every shuffle has width 32: a
// gpu.shuffle of width w < 32 is not CUDA's segments of w lanes but the
// first w lanes only (the others fall outside its member mask).
// tile.match_any: one match.any.sync over the whole warp a slot (the
// coordinates of a group of 32 are the warp's lanes, bit j lane j).
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"

#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

/// One gpu.shuffle of `mode` and width 32 per slot; `offset` gives its
/// offset (a mask or a source lane).
template <typename OpTy, gpu::ShuffleMode mode>
struct ShuffleLowering : OpConversionPattern<OpTy> {
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;

  ShuffleLowering(const TypeConverter &tc, MLIRContext *ctx,
                  const ThreadMapping &mapping)
      : OpConversionPattern<OpTy>(tc, ctx), mapping(mapping) {}

  Value offset(OpTy op, OpBuilder &b, Location loc) const;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto vecType = dyn_cast<VectorType>(adaptor.getSource().getType());
    if (!vecType)
      return rewriter.notifyMatchFailure(op, "fragment type not converted");
    Value from = offset(op, rewriter, loc);
    Value width = arith::ConstantIntOp::create(rewriter, loc, 32, 32);
    Value result = adaptor.getSource();
    for (int64_t slot = 0; slot < vecType.getNumElements(); ++slot) {
      Value mine =
          vector::ExtractOp::create(rewriter, loc, adaptor.getSource(), slot);
      Value theirs =
          gpu::ShuffleOp::create(rewriter, loc, mine, from, width, mode)
              .getShuffleResult();
      result = vector::InsertOp::create(rewriter, loc, theirs, result, slot);
    }
    rewriter.replaceOp(op, result);
    return success();
  }

  ThreadMapping mapping;
};

template <>
Value ShuffleLowering<ShuffleXorOp, gpu::ShuffleMode::XOR>::offset(
    ShuffleXorOp op, OpBuilder &b, Location loc) const {
  return arith::ConstantIntOp::create(b, loc,
                                      static_cast<int64_t>(op.getMask()), 32);
}

template <>
Value ShuffleLowering<ShuffleIdxOp, gpu::ShuffleMode::IDX>::offset(
    ShuffleIdxOp op, OpBuilder &b, Location loc) const {
  // Lane (laneid & (32 - S)) | lane: the group's first lane plus `lane`.
  const int64_t segment =
      std::min<int64_t>(op.getSource().getType().getDimSize(op.getDim()), 32);
  const int64_t lane = static_cast<int64_t>(op.getLane());
  if (segment == 32)
    return arith::ConstantIntOp::create(b, loc, lane, 32);
  Value tid =
      arith::IndexCastOp::create(b, loc, b.getI32Type(), mapping.threadId);
  Value first = arith::AndIOp::create(
      b, loc, tid, arith::ConstantIntOp::create(b, loc, 32 - segment, 32));
  return arith::OrIOp::create(b, loc, first,
                              arith::ConstantIntOp::create(b, loc, lane, 32));
}

/// tile.match_any: one match.any.sync a slot, every lane of the warp.
struct MatchAnyLowering : OpConversionPattern<MatchAnyOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(MatchAnyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto vecType = dyn_cast<VectorType>(adaptor.getSource().getType());
    auto resultType = dyn_cast_or_null<VectorType>(
        getTypeConverter()->convertType(op.getType()));
    if (!vecType || !resultType)
      return rewriter.notifyMatchFailure(op, "fragment type not converted");
    Location loc = op.getLoc();
    Value all = arith::ConstantIntOp::create(rewriter, loc, -1, 32);
    SmallVector<Value> masks;
    for (int64_t slot = 0; slot < vecType.getNumElements(); ++slot) {
      Value mine =
          vector::ExtractOp::create(rewriter, loc, adaptor.getSource(), slot);
      masks.push_back(
          NVVM::MatchSyncOp::create(rewriter, loc, rewriter.getI32Type(), all,
                                    mine, NVVM::MatchSyncKind::any));
    }
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, resultType, masks);
    return success();
  }
};

} // namespace

void mlir::tile::populateShuffleToGPUPatterns(const TypeConverter &converter,
                                              const ThreadMapping &mapping,
                                              RewritePatternSet &patterns) {
  patterns.add<ShuffleLowering<ShuffleXorOp, gpu::ShuffleMode::XOR>,
               ShuffleLowering<ShuffleIdxOp, gpu::ShuffleMode::IDX>>(
      converter, patterns.getContext(), mapping);
  patterns.add<MatchAnyLowering>(converter, patterns.getContext());
}
