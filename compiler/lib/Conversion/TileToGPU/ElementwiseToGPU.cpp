//===- ElementwiseToGPU.cpp - Element-wise fragment math to vector math --===//
//
// The operands and the result of an element-wise op share one layout, so
// the op acts slot by slot: it is kept, with vector types for tensor types.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"

#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

struct SplatOpLowering : OpConversionPattern<SplatOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SplatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = getTypeConverter()->convertType(op.getType());
    if (!type)
      return rewriter.notifyMatchFailure(op, "fragment type not convertible");
    rewriter.replaceOpWithNewOp<vector::BroadcastOp>(op, type,
                                                     adaptor.getValue());
    return success();
  }
};

/// arith.constant dense<c> : tensor<...> -> arith.constant dense<c> :
/// vector<...>
struct SplatConstantLowering : OpConversionPattern<arith::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(arith::ConstantOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto splat = dyn_cast<SplatElementsAttr>(op.getValue());
    if (!splat || !isa<RankedTensorType>(op.getType()))
      return rewriter.notifyMatchFailure(op, "not a splat fragment constant");
    auto type = dyn_cast_or_null<VectorType>(
        getTypeConverter()->convertType(op.getType()));
    if (!type)
      return rewriter.notifyMatchFailure(op, "fragment type not convertible");
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, type,
                                                   splat.resizeSplat(type));
    return success();
  }
};

/// Any element-wise op (arith.addf, arith.mulf, arith.truncf, ...) whose
/// operands or results are fragments is recreated on vectors.
struct ElementwiseLowering : ConversionPattern {
  ElementwiseLowering(const TypeConverter &tc, MLIRContext *ctx)
      : ConversionPattern(tc, MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (!op->hasTrait<OpTrait::Elementwise>() || op->getNumRegions() != 0)
      return rewriter.notifyMatchFailure(op, "not element-wise");
    SmallVector<Type> resultTypes;
    if (failed(getTypeConverter()->convertTypes(op->getResultTypes(),
                                                resultTypes)))
      return rewriter.notifyMatchFailure(op, "result type not convertible");
    OperationState state(op->getLoc(), op->getName(), operands, resultTypes,
                         op->getAttrs());
    Operation *lowered = rewriter.create(state);
    rewriter.replaceOp(op, lowered->getResults());
    return success();
  }
};

/// tile.broadcast and tile.reshape move no data: the result's slots are the
/// source's (tile-assign-layouts made sure of it).
template <typename OpTy> struct SameSlotsLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = this->getTypeConverter()->convertType(op.getType());
    if (!type || type != adaptor.getSource().getType())
      return rewriter.notifyMatchFailure(op, "slots differ");
    rewriter.replaceOp(op, adaptor.getSource());
    return success();
  }
};

} // namespace

void mlir::tile::populateElementwiseToGPUPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<SplatOpLowering, SplatConstantLowering, ElementwiseLowering,
               SameSlotsLowering<BroadcastOp>, SameSlotsLowering<ReshapeOp>>(
      converter, patterns.getContext());
}
