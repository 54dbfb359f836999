//===- TileOps.cpp - Verifiers of the tile dialect's operations ----------===//
#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::tile;

/// Checks what a load and a store share: one index per dimension of the
/// global tensor, a fragment of the same rank and element type, and no empty
/// fragment dimension.
static LogicalResult verifyTileAccess(Operation *op, MemRefType global,
                                      RankedTensorType fragment,
                                      size_t numIndices) {
  int64_t rank = global.getRank();
  if (static_cast<int64_t>(numIndices) != rank)
    return op->emitOpError() << "expects " << rank << " indices for a rank-"
                             << rank << " tensor, got " << numIndices;
  if (fragment.getRank() != rank)
    return op->emitOpError() << "fragment rank " << fragment.getRank()
                             << " differs from tensor rank " << rank;
  if (fragment.getElementType() != global.getElementType())
    return op->emitOpError()
           << "fragment element type " << fragment.getElementType()
           << " differs from tensor element type " << global.getElementType();
  for (auto [dim, size] : llvm::enumerate(fragment.getShape()))
    if (size <= 0)
      return op->emitOpError() << "fragment dimension " << dim << " is " << size
                               << "; requires a positive size";
  // Each thread of the kernel holds the same number of fragment elements.
  auto kernel = op->getParentOfType<func::FuncOp>();
  auto threads = kernel ? kernel->getAttrOfType<IntegerAttr>(
                              TileDialect::getThreadsAttrName())
                        : IntegerAttr();
  if (threads && threads.getInt() > 0 &&
      fragment.getNumElements() % threads.getInt() != 0)
    return op->emitOpError()
           << "fragment " << fragment << " has " << fragment.getNumElements()
           << " elements; requires a multiple of the kernel's "
           << threads.getInt() << " threads";
  return success();
}

LogicalResult LoadOp::verify() {
  return verifyTileAccess(*this, getSource().getType(), getResult().getType(),
                          getIndices().size());
}

LogicalResult StoreOp::verify() {
  return verifyTileAccess(*this, getDest().getType(), getValue().getType(),
                          getIndices().size());
}

LogicalResult TransposeOp::verify() {
  RankedTensorType source = getSource().getType(), result = getType();
  int64_t rank = source.getRank();
  if (rank < 2)
    return emitOpError() << "fragment " << source << " has rank " << rank
                         << "; requires rank 2 or more";
  if (source.getElementType() != result.getElementType())
    return emitOpError() << "result element type " << result.getElementType()
                         << " differs from source element type "
                         << source.getElementType();
  SmallVector<int64_t> expected(source.getShape());
  std::swap(expected[rank - 1], expected[rank - 2]);
  if (result.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "result " << result
                         << " is not the source with its last two dimensions "
                            "swapped";
  for (int64_t i = 0; i + 2 < rank; ++i)
    if (source.getDimSize(i) != 1)
      return emitOpError() << "fragment " << source << " has dimension " << i
                           << " of size " << source.getDimSize(i)
                           << "; requires 1 before the last two";
  return success();
}

#define GET_OP_CLASSES
#include "tilejit/Dialect/Tile/IR/TileOps.cpp.inc"
