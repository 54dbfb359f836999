//===- TileDialect.td - The tile dialect: tile-level GPU kernels ---------===//
//
// The `tile` dialect holds kernels as the DSL wrote them: work on whole tiles
// (fragments distributed over a thread block) rather than on threads.
//
//===----------------------------------------------------------------------===//

#ifndef TILEJIT_DIALECT_TILE_IR_TILEDIALECT_TD
#define TILEJIT_DIALECT_TILE_IR_TILEDIALECT_TD

include "mlir/IR/OpBase.td"

def Tile_Dialect : Dialect {
  let name = "tile";
  let cppNamespace = "::mlir::tile";
  let summary = "Tile-level GPU kernels: tiles of data moved and computed by a thread block.";
  let description = [{
    A kernel is a `func.func` carrying the `tile.threads` attribute (the number
    of threads of its block). Its arguments are global tensors (strided
    memrefs with dynamic sizes and strides) and scalars. Its body works on
    *fragments*: statically shaped `tensor` values that live in the registers
    of the whole block, each thread holding a part of them. Element-wise
    arithmetic on fragments uses the `arith` dialect directly. An optional
    `tile.grid` attribute gives the launch grid as a rule over the tensor
    arguments' sizes, e.g. `tile.grid = ["ceil(x[0] / 32)", "1", "1"]`.

    Example:

    ```mlir
    func.func @scale_copy(%x: memref<?x?xf32, strided<[?, ?], offset: ?>>,
                          %out: memref<?x?xf32, strided<[?, ?], offset: ?>>,
                          %scale: f32) attributes {tile.threads = 256 : i32} {
      %bx = tile.block_id 0
      %c32 = arith.constant 32 : index
      %row = arith.muli %bx, %c32 : index
      %c0 = arith.constant 0 : index
      %t = tile.load %x[%row, %c0] : memref<?x?xf32, strided<[?, ?], offset: ?>> -> tensor<32x64xf32>
      %s = tile.splat %scale : f32 -> tensor<32x64xf32>
      %r = arith.mulf %t, %s : tensor<32x64xf32>
      tile.store %r, %out[%row, %c0] : tensor<32x64xf32>, memref<?x?xf32, strided<[?, ?], offset: ?>>
      return
    }
    ```
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
    /// Name of the attribute that marks a func.func as a tile kernel and gives
    /// its number of threads per block.
    static constexpr ::llvm::StringLiteral getThreadsAttrName() { return "tile.threads"; }
    /// Argument attribute of a global tensor: its base address and row
    /// starts are multiples of this many bytes (a promise the host checks).
    static constexpr ::llvm::StringLiteral getAlignAttrName() { return "tile.align"; }
    /// Unit argument attribute of a global tensor whose view may repeat
    /// elements (a stride of 0, e.g. a weight read by every token): TMA
    /// cannot read such a view, so pipelined copies of it stay on cp.async.
    static constexpr ::llvm::StringLiteral getRepeatsAttrName() { return "tile.repeats"; }
    /// Name of the attribute that gives a kernel's launch grid: three strings,
    /// each a product of `ceil(NAME[DIM] / N)`, `NAME[DIM]` and integers
    /// (NAME a tensor argument's `tile.name`), which the host evaluates.
    static constexpr ::llvm::StringLiteral getGridAttrName() { return "tile.grid"; }
    /// Name of the attribute that asks for at least this many blocks of a
    /// kernel on each SM at once (an i32; ptxas limits the registers).
    static constexpr ::llvm::StringLiteral getMinBlocksAttrName() { return "tile.min_blocks"; }
    /// Name of the unit attribute that makes a kernel a programmatic
    /// dependent launch: it waits for the grid before it on the stream at its
    /// start and lets the grid after it launch early.
    static constexpr ::llvm::StringLiteral getProgrammaticAttrName() { return "tile.programmatic"; }
  }];
}

class Tile_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tile_Dialect, mnemonic, traits>;

#endif // TILEJIT_DIALECT_TILE_IR_TILEDIALECT_TD
