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

/// A vector of `type` whose slot i is slot `at(i).second` of `at(i).first`.
static Value
renamedSlots(OpBuilder &b, Location loc, VectorType type,
             llvm::function_ref<std::pair<Value, int64_t>(int64_t)> at) {
  SmallVector<Value> elements;
  for (int64_t slot = 0; slot < type.getNumElements(); ++slot) {
    auto [from, index] = at(slot);
    elements.push_back(vector::ExtractOp::create(b, loc, from, index));
  }
  return vector::FromElementsOp::create(b, loc, type, elements);
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
    if (!type)
      return rewriter.notifyMatchFailure(op, "fragment type not convertible");
    for (Value part : op.getParts())
      if (!stackedLayouts(op.getType(), part.getType(), k))
        return rewriter.notifyMatchFailure(op, "parts not laid out to stack");
    rewriter.replaceOp(
        op, renamedSlots(rewriter, op.getLoc(), type, [&](int64_t slot) {
          return std::pair(adaptor.getParts()[slot % k], slot / k);
        }));
    return success();
  }
};

struct UnstackLowering : OpConversionPattern<UnstackOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(UnstackOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    const int64_t k = op.getNumResults();
    // Checked before any op is built: a failed pattern leaves no IR.
    Type part = op.getParts().front().getType();
    auto type =
        dyn_cast_or_null<VectorType>(getTypeConverter()->convertType(part));
    if (!type)
      return rewriter.notifyMatchFailure(op, "fragment type not convertible");
    const bool oneLayout = llvm::all_of(op.getParts().getTypes(),
                                        [&](Type t) { return t == part; });
    if (!oneLayout || !stackedLayouts(op.getSource().getType(), part, k))
      return rewriter.notifyMatchFailure(op, "source not laid out to unstack");
    SmallVector<Value> parts;
    for (int64_t j = 0; j < k; ++j)
      parts.push_back(
          renamedSlots(rewriter, op.getLoc(), type, [&](int64_t slot) {
            return std::pair(adaptor.getSource(), k * slot + j);
          }));
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
