//===- TileDialect.cpp - The tile dialect and its kernel attribute -------===//
#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::tile;

#include "tilejit/Dialect/Tile/IR/TileDialect.cpp.inc"

void TileDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tilejit/Dialect/Tile/IR/TileOps.cpp.inc"
      >();
  registerAttributes();
}

/// `tile.threads` marks a kernel: it sits on a func.func and gives the number
/// of threads of the block, a multiple of the warp size up to 1024.
LogicalResult TileDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  if (attr.getName() == getGridAttrName()) {
    auto dims = dyn_cast<ArrayAttr>(attr.getValue());
    if (!isa<func::FuncOp>(op) || !dims || dims.size() != 3 ||
        !llvm::all_of(dims, [](Attribute a) { return isa<StringAttr>(a); }))
      return op->emitError() << "'" << getGridAttrName()
                             << "' must be an array of three strings on a "
                                "func.func";
    return success();
  }
  if (attr.getName() == getMinBlocksAttrName()) {
    auto blocks = dyn_cast<IntegerAttr>(attr.getValue());
    if (!isa<func::FuncOp>(op) || !blocks || !blocks.getType().isInteger(32) ||
        blocks.getInt() < 1 || blocks.getInt() > 32)
      return op->emitError() << "'" << getMinBlocksAttrName()
                             << "' must be an i32 from 1 to 32 on a "
                                "func.func";
    return success();
  }
  if (attr.getName() == getProgrammaticAttrName()) {
    if (!isa<func::FuncOp>(op) || !isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << getProgrammaticAttrName()
                             << "' must be a unit attribute on a func.func";
    return success();
  }
  if (attr.getName() != getThreadsAttrName())
    return op->emitError() << "unknown tile dialect attribute '"
                           << attr.getName().getValue() << "'";
  if (!isa<func::FuncOp>(op))
    return op->emitError() << "'" << getThreadsAttrName()
                           << "' may only be set on a func.func";
  auto threads = dyn_cast<IntegerAttr>(attr.getValue());
  if (!threads || !threads.getType().isInteger(32))
    return op->emitError() << "'" << getThreadsAttrName()
                           << "' must be an i32 integer attribute";
  int64_t n = threads.getInt();
  if (n < 32 || n > 1024 || n % 32 != 0)
    return op->emitError() << "'" << getThreadsAttrName() << "' is " << n
                           << "; requires a multiple of 32 between 32 and 1024";
  return success();
}

/// `tile.name` names an argument; `tile.align = N` (a power of two, at least
/// the element size) sits on a memref argument of a kernel.
LogicalResult TileDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  if (attr.getName() == "tile.name") {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitError()
             << "'tile.name' of argument " << argIndex << " must be a string";
    return success();
  }
  if (attr.getName() == getRepeatsAttrName()) {
    if (!isa<UnitAttr>(attr.getValue()) ||
        !isa<MemRefType>(
            op->getRegion(regionIndex).getArgument(argIndex).getType()))
      return op->emitError() << "'tile.repeats' of argument " << argIndex
                             << " must be a unit attribute of a memref";
    return success();
  }
  if (attr.getName() != getAlignAttrName())
    return op->emitError() << "unknown tile dialect argument attribute '"
                           << attr.getName().getValue() << "'";
  auto align = dyn_cast<IntegerAttr>(attr.getValue());
  Type type = op->getRegion(regionIndex).getArgument(argIndex).getType();
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref)
    return op->emitError() << "'tile.align' on argument " << argIndex
                           << " of type " << type
                           << "; requires a memref argument";
  int64_t bytes = memref.getElementTypeBitWidth() / 8;
  if (!align || align.getInt() <= 0 ||
      (align.getInt() & (align.getInt() - 1)) != 0 || align.getInt() < bytes)
    return op->emitError() << "'tile.align' of argument " << argIndex
                           << " must be a power of two of at least the "
                           << bytes << "-byte element size";
  return success();
}
