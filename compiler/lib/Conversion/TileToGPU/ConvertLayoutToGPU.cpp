//===- ConvertLayoutToGPU.cpp - tile.convert_layout through shared memory -===//
//
// Every element of the fragment has a row-major index in its shape. The
// slots of the source layout that hold an element's first copy write it to
// the op's shared buffer at that index; after a barrier, every slot of the
// result layout reads its element back. A barrier before the writes keeps a
// loop's next conversion from overwriting what this one's reads still need.
// Booleans travel as bytes.
//
//===----------------------------------------------------------------------===//
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

struct ConvertLayoutLowering : OpConversionPattern<ConvertLayoutOp> {
  ConvertLayoutLowering(const TypeConverter &tc, MLIRContext *ctx,
                        const ThreadMapping &mapping,
                        const llvm::DenseMap<Operation *, Value> &buffers)
      : OpConversionPattern(tc, ctx), mapping(mapping), buffers(buffers) {}

  LogicalResult
  matchAndRewrite(ConvertLayoutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    LayoutAttr from = getLayout(op.getSource().getType());
    LayoutAttr to = getLayout(op.getType());
    if (from && from == to) { // an annotation the value already had
      rewriter.replaceOp(op, adaptor.getSource());
      return success();
    }
    Value buffer = buffers.lookup(op);
    auto resultType = dyn_cast_or_null<VectorType>(
        getTypeConverter()->convertType(op.getType()));
    if (!from || !to || !buffer || !resultType)
      return rewriter.notifyMatchFailure(op, "no layouts or no buffer");
    ArrayRef<int64_t> shape = op.getType().getShape();
    Type elt = resultType.getElementType();
    Type stored = cast<MemRefType>(buffer.getType()).getElementType();

    gpu::BarrierOp::create(rewriter, loc);
    for (int64_t slot = 0; slot < from.getSlots(); ++slot) {
      if (!mayRepresent(from, slot))
        continue;
      SlotCoords at =
          slotCoords(rewriter, loc, from, shape, mapping.threadId, slot);
      Value index = linearize(rewriter, loc, at.coords, shape);
      Value value =
          vector::ExtractOp::create(rewriter, loc, adaptor.getSource(), slot);
      if (value.getType() != stored)
        value = arith::ExtUIOp::create(rewriter, loc, stored, value);
      auto write = [&](OpBuilder &b, Location l) {
        memref::StoreOp::create(b, l, value, buffer, index);
      };
      if (!at.representative) {
        write(rewriter, loc);
        continue;
      }
      scf::IfOp::create(rewriter, loc, at.representative,
                        [&](OpBuilder &b, Location l) {
                          write(b, l);
                          scf::YieldOp::create(b, l);
                        });
    }
    gpu::BarrierOp::create(rewriter, loc);
    SmallVector<Value> elements;
    for (int64_t slot = 0; slot < to.getSlots(); ++slot) {
      SlotCoords at =
          slotCoords(rewriter, loc, to, shape, mapping.threadId, slot);
      Value value = memref::LoadOp::create(
          rewriter, loc, buffer, linearize(rewriter, loc, at.coords, shape));
      if (value.getType() != elt)
        value = arith::TruncIOp::create(rewriter, loc, elt, value);
      elements.push_back(value);
    }
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, resultType,
                                                        elements);
    return success();
  }

  ThreadMapping mapping;
  const llvm::DenseMap<Operation *, Value> &buffers;
};

} // namespace

MemRefType mlir::tile::convertLayoutBufferType(ConvertLayoutOp op) {
  RankedTensorType type = op.getType();
  if (getLayout(op.getSource().getType()) == getLayout(type))
    return {}; // no data moves
  Type elt = type.getElementType();
  if (elt.isInteger(1))
    elt = IntegerType::get(op.getContext(), 8);
  auto space =
      gpu::AddressSpaceAttr::get(op.getContext(), gpu::AddressSpace::Workgroup);
  return MemRefType::get({type.getNumElements()}, elt,
                         MemRefLayoutAttrInterface{}, space);
}

void mlir::tile::populateConvertLayoutToGPUPatterns(
    const TypeConverter &converter, const ThreadMapping &mapping,
    const llvm::DenseMap<Operation *, Value> &buffers,
    RewritePatternSet &patterns) {
  patterns.add<ConvertLayoutLowering>(converter, patterns.getContext(), mapping,
                                      buffers);
}
