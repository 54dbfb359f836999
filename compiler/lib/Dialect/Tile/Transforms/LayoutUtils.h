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

#include <algorithm>
#include <optional>

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

/// The tile.unstack that `v` reaches through reshapes of one use each, or
/// null: a load feeding one is read straight into the layout it wants.
inline UnstackOp unstackOf(Value v) {
  while (v.hasOneUse()) {
    Operation *user = *v.user_begin();
    if (auto unstack = dyn_cast<UnstackOp>(user))
      return unstack;
    if (!isa<ReshapeOp>(user))
      return {};
    v = user->getResult(0);
  }
  return {};
}

/// The vector (elements) tile.unstack wants its source in when the source's
/// own layout does not hold whole groups of `parts`: parts x v, v the
/// largest power of two that keeps the chunk within 16 bytes (at least one
/// group) and divides the fragment into whole rounds of `threads`.
inline int64_t unstackVector(RankedTensorType source, int64_t parts,
                             int64_t threads) {
  const int64_t bytes =
      std::max<int64_t>(1, source.getElementTypeBitWidth() / 8);
  int64_t v = 1;
  while (parts * v * 2 * bytes <= 16 &&
         source.getNumElements() % (threads * parts * v * 2) == 0)
    v *= 2;
  return parts * v;
}

/// The widest vector (elements) an access of `fragment` to `memref` can
/// use (VectorWidth.cpp).
int64_t accessWidth(func::FuncOp kernel, Value memref,
                    RankedTensorType fragment);

/// Whether chunks of `vector` elements of a fragment of `type` can be
/// read from / written to `memref` directly: chunks within a row (the
/// vector divides the last dimension), no wider than its accesses allow or
/// whole multiples of them (in vector accesses of that width: chunks then
/// start at multiples of the access alignment), or a stack's chunks of
/// 3 x 2^n elements where the access takes vectors at all (aligned to their
/// bytes' power-of-two factor, chunkAlignment).
inline bool accessTakes(func::FuncOp kernel, Value memref,
                        RankedTensorType type, int64_t vector) {
  const int64_t width = accessWidth(kernel, memref, type);
  return type.getShape().back() % vector == 0 && (vector <= width || width > 1);
}

/// The vector a load that reaches a tile.unstack (unstackOf) is read in:
/// whole groups (unstackVector) where the access takes them; nullopt
/// otherwise (the load is then laid out as any other).
inline std::optional<int64_t> groupVector(func::FuncOp kernel, LoadOp load,
                                          int64_t threads) {
  UnstackOp unstack = unstackOf(load.getResult());
  if (!unstack)
    return std::nullopt;
  RankedTensorType type = load.getType();
  const int64_t v = unstackVector(type, unstack.getNumResults(), threads);
  if (type.getNumElements() % (threads * v) != 0 ||
      !accessTakes(kernel, load.getSource(), type, v)) // v divides the rows
    return std::nullopt;
  return v;
}
/// A fragment that needs more than a thread's 255 registers is the
/// author's error, at its line (VectorWidth.cpp).
LogicalResult checkRegisterBudget(func::FuncOp kernel, int64_t threads);
/// The widest vector (elements) every access of the kernel can use
/// (VectorWidth.cpp).
int64_t chooseVectorWidth(func::FuncOp kernel, int64_t threads,
                          Operation **narrowest = nullptr);

} // namespace mlir::tile

#endif // TILEJIT_LIB_DIALECT_TILE_TRANSFORMS_LAYOUTUTILS_H
