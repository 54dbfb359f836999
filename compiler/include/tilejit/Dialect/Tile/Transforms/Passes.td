//===- Passes.td - Passes on the tile dialect ----------------------------===//
#ifndef TILEJIT_DIALECT_TILE_TRANSFORMS_PASSES_TD
#define TILEJIT_DIALECT_TILE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AssignLayouts : Pass<"tile-assign-layouts", "::mlir::ModuleOp"> {
  let summary = "Give every fragment of every tile kernel a #tile.layout.";
  let description = [{
    Chooses the kernel's vector width (the widest 16-byte-or-less vector that
    every global access of an unreduced fragment can use, from the tensors'
    `tile.align` promises and unit inner strides) and gives each fragment
    a layout: loads, transposes and splats get the blocked layout of their
    own shape; a reduction gets its source's layout with the reduced
    dimension sliced; a broadcast of a reduction result un-slices it again;
    a reshape keeps the element order; element-wise ops take their
    operands' common layout (a splat or constant operand is re-made in it).
    Where two layouts meet (element-wise operands, a loop's or if's yield,
    a broadcast of a fragment that is not a reduction of the result's
    shape) it inserts a tile.convert_layout. Reports fragments that cannot
    be spread over the threads, unsupported reductions and shuffles.
  }];
  let dependentDialects = ["::mlir::tile::TileDialect"];
}

#endif // TILEJIT_DIALECT_TILE_TRANSFORMS_PASSES_TD
