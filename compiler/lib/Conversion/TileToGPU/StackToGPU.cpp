//===- StackToGPU.cpp - tile.stack and tile.unstack in registers ---------===//
//
// tile-assign-layouts gives a stack's parts one layout of vector v and its
// result the same with vector k x v (an unstack the other way round), so
// slot k * s + j of the stacked fragment is slot s of part j in every
// thread: the slots are renamed, nothing moves between threads.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"

#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tile;

/// Whether `stacked` is `part` with `parts` times its vector (both without
/// sliced dimensions, over the same threads): the layouts the slot renaming
/// needs.
static bool stackedLayouts(Type stacked, Type part, int64_t parts) {
  LayoutAttr whole = getLayout(stacked), one = getLayout(part);
  return whole && one && whole.getSliced().empty() && one.getSliced().empty() &&
         whole.getThreads() == one.getThreads() &&
         whole.getVector() == one.getVector() * parts;
}

namespace {

struct StackLowering : OpConversionPattern<StackOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(StackOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    const int64_t k = op.getNumOperands();
    auto type = dyn_cast_or_null<VectorType>(
        getTypeConverter()->convertType(op.getType()));
    for (Value part : op.getParts())
      if (!stackedLayouts(op.getType(), part.getType(), k))
        return rewriter.notifyMatchFailure(op, "parts not laid out to stack");
    if (!type)
      return rewriter.notifyMatchFailure(op, "fragment type not convertible");
    Location loc = op.getLoc();
    SmallVector<Value> elements;
    for (int64_t slot = 0; slot < type.getNumElements(); ++slot)
      elements.push_back(vector::ExtractOp::create(
          rewriter, loc, adaptor.getParts()[slot % k], slot / k));
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, type, elements);
    return success();
  }
};

struct UnstackLowering : OpConversionPattern<UnstackOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(UnstackOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    const int64_t k = op.getNumResults();
    SmallVector<Value> parts;
    for (Value part : op.getParts()) {
      auto type = dyn_cast_or_null<VectorType>(
          getTypeConverter()->convertType(part.getType()));
      if (!type)
        return rewriter.notifyMatchFailure(op, "fragment type not convertible");
      if (!stackedLayouts(op.getSource().getType(), part.getType(), k))
        return rewriter.notifyMatchFailure(op,
                                           "source not laid out to unstack");
      const int64_t j = static_cast<int64_t>(parts.size());
      SmallVector<Value> elements;
      for (int64_t slot = 0; slot < type.getNumElements(); ++slot)
        elements.push_back(vector::ExtractOp::create(
            rewriter, op.getLoc(), adaptor.getSource(), k * slot + j));
      parts.push_back(vector::FromElementsOp::create(rewriter, op.getLoc(),
                                                     type, elements));
    }
    rewriter.replaceOp(op, parts);
    return success();
  }
};

} // namespace

void mlir::tile::populateStackToGPUPatterns(const TypeConverter &converter,
                                            RewritePatternSet &patterns) {
  patterns.add<StackLowering, UnstackLowering>(converter,
                                               patterns.getContext());
}
