//===- Passes.h - Passes on the tile dialect -----------------------------===//
#ifndef TILEJIT_DIALECT_TILE_TRANSFORMS_PASSES_H
#define TILEJIT_DIALECT_TILE_TRANSFORMS_PASSES_H

#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "mlir/Pass/Pass.h"

namespace mlir::tile {

#define GEN_PASS_DECL
#include "tilejit/Dialect/Tile/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tilejit/Dialect/Tile/Transforms/Passes.h.inc"

} // namespace mlir::tile

#endif // TILEJIT_DIALECT_TILE_TRANSFORMS_PASSES_H
