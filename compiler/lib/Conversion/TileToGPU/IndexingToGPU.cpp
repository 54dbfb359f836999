//===- IndexingToGPU.cpp - Block ids, coordinates, loads at positions ----===//
//
// tile.load_at reads slot by slot: each slot's indices from the index
// vectors (which share the result's layout), one scalar load where all are
// inside the tensor (unsigned compares: a negative index is outside), else 0.
// tile.store_at the same way: a scalar store (or atomic) a slot, where
// inside and the mask holds.
//
#include "Patterns.h"

#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
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

/// The extents of a memref, one memref.dim a dimension.
static SmallVector<Value> extentsOf(OpBuilder &b, Location loc, Value source) {
  SmallVector<Value> extents;
  for (int64_t d = 0; d < cast<MemRefType>(source.getType()).getRank(); ++d)
    extents.push_back(memref::DimOp::create(b, loc, source, d));
  return extents;
}

/// The indices of `slot` and whether they are inside `extents`
/// (sign-extended: a negative index wraps above every extent).
static std::pair<SmallVector<Value>, Value>
slotPosition(OpBuilder &b, Location loc, ArrayRef<Value> extents,
             ValueRange indices, int64_t slot) {
  SmallVector<Value> at;
  Value inside;
  for (auto [d, index] : llvm::enumerate(indices)) {
    Value i = vector::ExtractOp::create(b, loc, index, slot);
    at.push_back(arith::IndexCastOp::create(b, loc, b.getIndexType(), i));
    Value in = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                     at.back(), extents[d]);
    inside =
        inside ? arith::AndIOp::create(b, loc, inside, in).getResult() : in;
  }
  return {at, inside};
}

/// tile.load_at: a bounds-checked scalar load a slot.
struct LoadAtLowering : OpConversionPattern<LoadAtOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(LoadAtOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto vecType = dyn_cast_or_null<VectorType>(
        getTypeConverter()->convertType(op.getType()));
    if (!vecType)
      return rewriter.notifyMatchFailure(op, "fragment type not convertible");
    for (Value index : adaptor.getIndices())
      if (cast<VectorType>(index.getType()).getNumElements() !=
          vecType.getNumElements())
        return rewriter.notifyMatchFailure(op, "indices in another layout");
    Location loc = op.getLoc();
    Value source = adaptor.getSource();
    Type elt = vecType.getElementType();
    Value zero = arith::ConstantOp::create(rewriter, loc, elt,
                                           rewriter.getZeroAttr(elt));
    SmallVector<Value> extents = extentsOf(rewriter, loc, source);
    SmallVector<Value> elements;
    for (int64_t slot = 0; slot < vecType.getNumElements(); ++slot) {
      auto [at, inside] =
          slotPosition(rewriter, loc, extents, adaptor.getIndices(), slot);
      elements.push_back(
          scf::IfOp::create(
              rewriter, loc, inside,
              [&](OpBuilder &b, Location l) {
                scf::YieldOp::create(
                    b, l, memref::LoadOp::create(b, l, source, at).getResult());
              },
              [&](OpBuilder &b, Location l) {
                scf::YieldOp::create(b, l, zero);
              })
              .getResult(0));
    }
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, vecType, elements);
    return success();
  }
};
/// tile.store_at: a bounds-checked scalar store or atomic a slot.
struct StoreAtLowering : OpConversionPattern<StoreAtOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(StoreAtOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto vecType = dyn_cast<VectorType>(adaptor.getValue().getType());
    if (!vecType)
      return rewriter.notifyMatchFailure(op, "value not converted to vector");
    const int64_t slots = vecType.getNumElements();
    for (Value v : adaptor.getIndices())
      if (cast<VectorType>(v.getType()).getNumElements() != slots)
        return rewriter.notifyMatchFailure(op, "indices in another layout");
    if (Value mask = adaptor.getMask();
        mask && cast<VectorType>(mask.getType()).getNumElements() != slots)
      return rewriter.notifyMatchFailure(op, "mask in another layout");
    Location loc = op.getLoc();
    Value dest = adaptor.getDest();
    std::optional<arith::AtomicRMWKind> kind;
    if (std::optional<AtomicKind> combine = op.getCombine())
      kind = atomicRMWKind(*combine, vecType.getElementType());
    SmallVector<Value> extents = extentsOf(rewriter, loc, dest);
    for (int64_t slot = 0; slot < slots; ++slot) {
      auto [at, inside] =
          slotPosition(rewriter, loc, extents, adaptor.getIndices(), slot);
      if (Value mask = adaptor.getMask())
        inside = arith::AndIOp::create(
            rewriter, loc, inside,
            vector::ExtractOp::create(rewriter, loc, mask, slot));
      Value element =
          vector::ExtractOp::create(rewriter, loc, adaptor.getValue(), slot);
      scf::IfOp::create(rewriter, loc, inside, [&](OpBuilder &b, Location l) {
        if (kind)
          memref::AtomicRMWOp::create(b, l, *kind, element, dest, at);
        else
          memref::StoreOp::create(b, l, element, dest, at);
        scf::YieldOp::create(b, l);
      });
    }
    rewriter.eraseOp(op);
    return success();
  }
};
} // namespace

void mlir::tile::populateIndexingToGPUPatterns(const TypeConverter &converter,
                                               const ThreadMapping &mapping,
                                               RewritePatternSet &patterns) {
  patterns.add<BlockIdLowering>(converter, patterns.getContext());
  patterns.add<IotaLowering>(converter, patterns.getContext(), mapping);
  patterns.add<LoadAtLowering, StoreAtLowering>(converter,
                                                patterns.getContext());
}
