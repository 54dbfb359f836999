//===- LayoutUtils.h - What layout assignment and its vector width share -===//
//
// Internal to lib/Dialect/Tile/Transforms: a fragment's layout, which ops
// take their users' layouts, the element-wise walk both predicates of
// AssignLayouts.cpp use, and the kernel-wide vector width and register
// check (VectorWidth.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_LIB_DIALECT_TILE_TRANSFORMS_LAYOUTUTILS_H
#define TILEJIT_LIB_DIALECT_TILE_TRANSFORMS_LAYOUTUTILS_H

#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::tile {

/// The layout of fragment `v`, or null (not laid out, or not a fragment).
inline LayoutAttr layoutOf(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type ? dyn_cast_or_null<LayoutAttr>(type.getEncoding()) : LayoutAttr();
}

/// Splats, constants, iotas and element-wise ops on nothing else (an iota
/// compared with an index): computable in any layout, so each takes the
/// layout its first user wants (and is copied for users wanting another).
inline bool isSplatLike(Operation *op) {
  if (!op)
    return false;
  if (isa<SplatOp, IotaOp>(op) ||
      (isa<arith::ConstantOp>(op) &&
       isa<RankedTensorType>(op->getResult(0).getType())))
    return true;
  if (!op->hasTrait<OpTrait::Elementwise>() || op->getNumRegions() != 0 ||
      op->getNumResults() != 1 ||
      !isa<RankedTensorType>(op->getResult(0).getType()))
    return false;
  return llvm::all_of(op->getOperands(), [](Value v) {
    return !isa<RankedTensorType>(v.getType()) ||
           isSplatLike(v.getDefiningOp());
  });
}

/// Whether `op` is element-wise (no regions) with at least one fragment
/// operand that is not splat-like, and `pred` holds for every such operand.
inline bool elementwiseOver(Operation *op,
                            llvm::function_ref<bool(Value)> pred) {
  if (!op || !op->hasTrait<OpTrait::Elementwise>() || op->getNumRegions() != 0)
    return false;
  bool any = false;
  for (Value operand : op->getOperands()) {
    if (!isa<RankedTensorType>(operand.getType()) ||
        isSplatLike(operand.getDefiningOp()))
      continue;
    if (!pred(operand))
      return false;
    any = true;
  }
  return any;
}

/// The widest vector (elements) an access of `fragment` to `memref` can
/// use (VectorWidth.cpp).
int64_t accessWidth(func::FuncOp kernel, Value memref,
                    RankedTensorType fragment);
/// A fragment that needs more than a thread's 255 registers is the
/// author's error, at its line (VectorWidth.cpp).
LogicalResult checkRegisterBudget(func::FuncOp kernel, int64_t threads);
/// The widest vector (elements) every access of the kernel can use
/// (VectorWidth.cpp).
int64_t chooseVectorWidth(func::FuncOp kernel, int64_t threads);

} // namespace mlir::tile

#endif // TILEJIT_LIB_DIALECT_TILE_TRANSFORMS_LAYOUTUTILS_H
