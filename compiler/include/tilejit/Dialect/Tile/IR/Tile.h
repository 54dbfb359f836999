//===- Tile.h - The tile dialect and its operations ----------------------===//
#ifndef TILEJIT_DIALECT_TILE_IR_TILE_H
#define TILEJIT_DIALECT_TILE_IR_TILE_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tilejit/Dialect/Tile/IR/TileDialect.h.inc"
#include "tilejit/Dialect/Tile/IR/TileEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tilejit/Dialect/Tile/IR/TileAttrs.h.inc"

#define GET_OP_CLASSES
#include "tilejit/Dialect/Tile/IR/TileOps.h.inc"

namespace mlir::tile {
/// The tile.alloc_shared that `memref` is, or is a (chain of) memref.subview
/// of: a pipelined loop's buffer of one step (tile-lower-pipelined). Null
/// for any other memref.
AllocSharedOp getSharedTile(Value memref);
} // namespace mlir::tile

#endif // TILEJIT_DIALECT_TILE_IR_TILE_H
