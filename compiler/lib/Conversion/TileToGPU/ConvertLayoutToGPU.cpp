//===- ConvertLayoutToGPU.cpp - tile.convert_layout through shared memory -===//
//
// Where every thread already holds the elements it is to hold (in other
// slots), the slots are permuted in registers (registerPermutation).
// Otherwise every element of the fragment has a row-major index in its
// shape: the slots of the source layout that hold an element's first copy
// write it to the op's shared buffer at that index; after a barrier, every
// slot of the result layout reads its element back. A barrier before the writes
// keeps a loop's next conversion from overwriting what this one's reads still
// need. Booleans travel as bytes.
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
    if (auto permutation = registerPermutation(from, to);
        permutation && resultType) {
      SmallVector<Value> elements;
      for (int64_t slot : *permutation)
        elements.push_back(vector::ExtractOp::create(
            rewriter, loc, adaptor.getSource(), slot));
      rewriter.replaceOp(op, vector::FromElementsOp::create(
                                 rewriter, loc, resultType, elements));
      return success();
    }
    if (!from || !to || !buffer || !resultType)
      return rewriter.notifyMatchFailure(op, "no layouts or no buffer");
    ArrayRef<int64_t> shape = op.getType().getShape();
    gpu::BarrierOp::create(rewriter, loc);
    storeFragment(rewriter, loc, from, shape, adaptor.getSource(), buffer,
                  mapping.threadId);
    gpu::BarrierOp::create(rewriter, loc);
    rewriter.replaceOp(op, loadFragment(rewriter, loc, to, shape, resultType,
                                        buffer, mapping.threadId));
    return success();
  }

  ThreadMapping mapping;
  const llvm::DenseMap<Operation *, Value> &buffers;
};

} // namespace

void mlir::tile::storeFragment(OpBuilder &b, Location loc, LayoutAttr layout,
                               ArrayRef<int64_t> shape, Value slots,
                               Value buffer, Value threadId) {
  Type stored = cast<MemRefType>(buffer.getType()).getElementType();
  for (int64_t slot = 0; slot < layout.getSlots(); ++slot) {
    if (!mayRepresent(layout, slot))
      continue;
    SlotCoords at = slotCoords(b, loc, layout, shape, threadId, slot);
    Value index = linearize(b, loc, at.coords, shape);
    Value value = vector::ExtractOp::create(b, loc, slots, slot);
    if (value.getType() != stored)
      value = arith::ExtUIOp::create(b, loc, stored, value);
    auto write = [&](OpBuilder &wb, Location l) {
      memref::StoreOp::create(wb, l, value, buffer, index);
    };
    if (!at.representative) {
      write(b, loc);
      continue;
    }
    scf::IfOp::create(b, loc, at.representative,
                      [&](OpBuilder &wb, Location l) {
                        write(wb, l);
                        scf::YieldOp::create(wb, l);
                      });
  }
}

Value mlir::tile::loadFragment(OpBuilder &b, Location loc, LayoutAttr layout,
                               ArrayRef<int64_t> shape, VectorType type,
                               Value buffer, Value threadId) {
  Type elt = type.getElementType();
  SmallVector<Value> elements;
  for (int64_t slot = 0; slot < layout.getSlots(); ++slot) {
    SlotCoords at = slotCoords(b, loc, layout, shape, threadId, slot);
    Value value = memref::LoadOp::create(b, loc, buffer,
                                         linearize(b, loc, at.coords, shape));
    if (value.getType() != elt)
      value = arith::TruncIOp::create(b, loc, elt, value);
    elements.push_back(value);
  }
  return vector::FromElementsOp::create(b, loc, type, elements);
}

MemRefType mlir::tile::convertLayoutBufferType(ConvertLayoutOp op) {
  RankedTensorType type = op.getType();
  if (getLayout(op.getSource().getType()) == getLayout(type) ||
      registerPermutation(getLayout(op.getSource().getType()), getLayout(type)))
    return {}; // no data moves between threads
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
