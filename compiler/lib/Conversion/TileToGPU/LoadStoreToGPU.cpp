//===- LoadStoreToGPU.cpp - tile.load/store to per-thread memory ops -----===//
//
// Each thread visits its slots of the fragment; for slot s it owns element
// l = s * T + tid, whose coordinates in the tile are l's row-major digits.
// Outside the tensor, loads read zero and stores are dropped.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"

#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

/// The global coordinates of one slot of this thread, and whether they are
/// inside the tensor (null when the author promised in-bounds access).
struct SlotAccess {
  SmallVector<Value> indices;
  Value inBounds;
};

SlotAccess computeSlotAccess(OpBuilder &b, Location loc,
                             const ThreadMapping &mapping, Value memref,
                             ValueRange base, ArrayRef<int64_t> shape,
                             int64_t slot, bool checkBounds) {
  auto cst = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  Value linear = arith::AddIOp::create(b, loc, mapping.threadId,
                                       cst(slot * mapping.threads));
  SlotAccess access;
  int64_t stride = 1;
  for (int64_t s : shape)
    stride *= s;
  for (auto [dim, size] : llvm::enumerate(shape)) {
    stride /= size;
    Value coord = arith::DivUIOp::create(b, loc, linear, cst(stride));
    if (dim != 0)
      coord = arith::RemUIOp::create(b, loc, coord, cst(size));
    Value index = arith::AddIOp::create(b, loc, base[dim], coord);
    access.indices.push_back(index);
    if (!checkBounds)
      continue;
    Value extent = memref::DimOp::create(b, loc, memref, dim);
    Value inside =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, index, extent);
    access.inBounds =
        access.inBounds ? arith::AndIOp::create(b, loc, access.inBounds, inside)
                        : inside;
  }
  return access;
}

struct LoadOpLowering : OpConversionPattern<LoadOp> {
  LoadOpLowering(const TypeConverter &tc, MLIRContext *ctx,
                 const ThreadMapping &mapping)
      : OpConversionPattern(tc, ctx), mapping(mapping) {}

  LogicalResult
  matchAndRewrite(LoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto vecType = dyn_cast_or_null<VectorType>(
        getTypeConverter()->convertType(op.getType()));
    if (!vecType)
      return rewriter.notifyMatchFailure(op, "fragment type not convertible");
    Location loc = op.getLoc();
    Type elt = vecType.getElementType();
    Value zero = arith::ConstantOp::create(rewriter, loc, elt,
                                           rewriter.getZeroAttr(elt));
    SmallVector<Value> elements;
    for (int64_t slot = 0; slot < vecType.getNumElements(); ++slot) {
      SlotAccess access = computeSlotAccess(
          rewriter, loc, mapping, adaptor.getSource(), adaptor.getIndices(),
          op.getType().getShape(), slot, !op.getInBounds());
      if (!access.inBounds) {
        elements.push_back(memref::LoadOp::create(
            rewriter, loc, adaptor.getSource(), access.indices));
        continue;
      }
      auto guarded = scf::IfOp::create(
          rewriter, loc, access.inBounds,
          [&](OpBuilder &b, Location l) {
            Value v = memref::LoadOp::create(b, l, adaptor.getSource(),
                                             access.indices);
            scf::YieldOp::create(b, l, v);
          },
          [&](OpBuilder &b, Location l) { scf::YieldOp::create(b, l, zero); });
      elements.push_back(guarded.getResult(0));
    }
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, vecType, elements);
    return success();
  }

  ThreadMapping mapping;
};

struct StoreOpLowering : OpConversionPattern<StoreOp> {
  StoreOpLowering(const TypeConverter &tc, MLIRContext *ctx,
                  const ThreadMapping &mapping)
      : OpConversionPattern(tc, ctx), mapping(mapping) {}

  LogicalResult
  matchAndRewrite(StoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto vecType = dyn_cast<VectorType>(adaptor.getValue().getType());
    if (!vecType)
      return rewriter.notifyMatchFailure(op, "value not converted to vector");
    Location loc = op.getLoc();
    for (int64_t slot = 0; slot < vecType.getNumElements(); ++slot) {
      SlotAccess access = computeSlotAccess(
          rewriter, loc, mapping, adaptor.getDest(), adaptor.getIndices(),
          op.getValue().getType().getShape(), slot, !op.getInBounds());
      Value element =
          vector::ExtractOp::create(rewriter, loc, adaptor.getValue(), slot);
      if (!access.inBounds) {
        memref::StoreOp::create(rewriter, loc, element, adaptor.getDest(),
                                access.indices);
        continue;
      }
      scf::IfOp::create(rewriter, loc, access.inBounds,
                        [&](OpBuilder &b, Location l) {
                          memref::StoreOp::create(
                              b, l, element, adaptor.getDest(), access.indices);
                          scf::YieldOp::create(b, l);
                        });
    }
    rewriter.eraseOp(op);
    return success();
  }

  ThreadMapping mapping;
};

} // namespace

void mlir::tile::populateLoadStoreToGPUPatterns(const TypeConverter &converter,
                                                const ThreadMapping &mapping,
                                                RewritePatternSet &patterns) {
  patterns.add<LoadOpLowering, StoreOpLowering>(converter,
                                                patterns.getContext(), mapping);
}
