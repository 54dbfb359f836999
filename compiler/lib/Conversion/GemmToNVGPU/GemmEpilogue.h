//===- GemmEpilogue.h - The author's ops between a gemm and its store ----===//
//
// What a 384-thread gemm kernel may compute from its accumulator before the
// store: element-wise arith ops (and casts) whose other operands are
// constants, the kernel's scalars, and rows or columns of vectors loaded at
// the tile's origin and broadcast ([128, 1] at [m0, j]: one value a row;
// [1, BN] at [i, n0]: one a column). The TMA + WGMMA kernel evaluates them
// on each accumulator element in its epilogue (GemmEpilogue.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_CONVERSION_GEMMTONVGPU_GEMMEPILOGUE_H
#define TILEJIT_CONVERSION_GEMMTONVGPU_GEMMEPILOGUE_H

#include "GemmKernel.h"

#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <string>

namespace mlir::tile {

/// A value the epilogue reads besides the accumulator.
struct EpilogueLeaf {
  enum class Kind { constant, scalar, rowVector, colVector };
  Kind kind;
  Value value;             ///< the fragment the epilogue ops read
  TypedAttr constant;      ///< constant: its element value
  BlockArgument arg;       ///< scalar: the kernel's scalar; vectors: tensor
  Value index;             ///< rowVector: the column read; colVector: row
  unsigned firstParam = 0; ///< its first parameter in the new kernel
};

struct GemmEpilogueMatch {
  StoreOp store;
  Value result;                 ///< the pipelined loop's accumulator
  SmallVector<Operation *> ops; ///< element-wise, in program order
  SmallVector<EpilogueLeaf> leaves;
  llvm::SmallPtrSet<Operation *, 16> all; ///< every op the epilogue owns

  /// Nothing but a conversion to the output type: the kernel's own epilogue.
  bool isPlain() const;
  /// The new kernel's parameters after its seven (leaves' firstParam set
  /// from `first`), and their lines of the kernel ABI.
  SmallVector<Type> params(MLIRContext *ctx, unsigned first);
  SmallVector<std::string> abiLines(func::FuncOp kernel) const;
};

/// Matches the ops from `result` (the loop's) to its one store at
/// [m0, n0]; reports what the epilogue may not hold at the op.
FailureOr<GemmEpilogueMatch>
matchGemmEpilogue(func::FuncOp kernel, Value result, Value m0, Value n0);

/// The epilogue on scalars in the new kernel `func`: the value stored for
/// the accumulator element at (row, col). `cloneIndex` brings a leaf's
/// index (tile-level) into the kernel; vector reads are memoised, so each
/// row's and column's value is loaded once a thread.
GemmEpilogueFn
makeGemmEpilogue(const GemmEpilogueMatch &m, const LLVM::LLVMFuncOp &func,
                 const llvm::DenseMap<Value, Value> &clonedIndices);

} // namespace mlir::tile

#endif // TILEJIT_CONVERSION_GEMMTONVGPU_GEMMEPILOGUE_H
