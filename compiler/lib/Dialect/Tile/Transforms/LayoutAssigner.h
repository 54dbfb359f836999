//===- LayoutAssigner.h - The layout walk of one kernel ------------------===//
//
// Internal to lib/Dialect/Tile/Transforms: the walk that gives every
// fragment of a kernel a #tile.layout. AssignLayouts.cpp holds the walk
// itself (operands, splats placed lazily, element-wise ops, loops and
// branches) and the pass; OpLayouts.cpp the rule of each op that moves
// elements (scans, reductions, broadcasts, loads and stores, the author's
// relayouts, shuffles, reshapes, stacks).
//
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_LIB_DIALECT_TILE_TRANSFORMS_LAYOUTASSIGNER_H
#define TILEJIT_LIB_DIALECT_TILE_TRANSFORMS_LAYOUTASSIGNER_H

#include "LayoutUtils.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/DenseMap.h"

#include <cstdint>

namespace mlir::tile {

/// Gives fragment `v` the type with `layout` (a constant's value too).
void setLayout(Value v, LayoutAttr layout);

/// Assigns the layouts of one kernel.
class LayoutAssigner {
public:
  LayoutAssigner(func::FuncOp kernel, int64_t threads, int64_t vector)
      : kernel(kernel), threads(threads), vector(vector) {}

  LogicalResult run();
  /// Erases the ops the walk left unused (pure, no uses), repeatedly.
  void eraseDead();

private:
  /// The blocked layout of `type`'s own shape (`op` reports the error),
  /// with vectors of at most `widest` elements.
  FailureOr<LayoutAttr> blockedLayout(RankedTensorType type, Operation *op,
                                      int64_t widest = INT64_MAX);

  LogicalResult assignBlocked(Value v, Operation *op);

  /// Makes `use`'s owner read its value in layout `to`: a
  /// tile.convert_layout just before the owner.
  static void convert(OpOperand &use, LayoutAttr to);

  /// The layout of operand `v`, placing a lazily laid-out splat or constant
  /// in `want` (or blocked when `want` is null).
  FailureOr<LayoutAttr> operandLayout(OpOperand &use, LayoutAttr want);

  /// Lays out a splat-like op in `layout`, and the splat-like ops it is
  /// computed from.
  LogicalResult place(Operation *op, LayoutAttr layout);

  LogicalResult visit(Operation *op);

  LogicalResult visitElementwise(Operation *op);

  /// Whether `v` is a broadcast, or element-wise on broadcast-like values
  /// and splats (a row's mask from a reduction): computable again in any
  /// layout from the broadcasts' sources, which are smaller.
  static bool isBroadcastLike(Value v);

  /// Broadcast-like `v` computed again in layout `to`, just after its
  /// definition: each broadcast from its source converted to `to`'s slice
  /// (a reduction result: a few elements a thread, often in registers),
  /// the element-wise ops cloned. Once per value and layout.
  FailureOr<Value> rebroadcast(Value v, LayoutAttr to);

  /// The loop of `v` if it is a carried fragment whose initial value is a
  /// splat that no layout has been chosen for yet.
  static scf::ForOp pendingLoop(Value v);

  /// Carried fragments keep their initial value's layout; a splat's is
  /// chosen by the first use in the body that wants one (or by the yield).
  LogicalResult visitFor(scf::ForOp loop);

  /// A loop body yields its carried fragments in their layouts; the first
  /// branch of an if to yield a fragment sets the result's layout.
  LogicalResult visitYield(scf::YieldOp yield);

  /// tile.scan: its source's layout, blocked (a reduction's result is
  /// broadcast back to every copy first).
  LogicalResult visitScan(ScanOp op);

  LogicalResult visitReduce(ReduceOp op);

  LogicalResult visitBroadcast(BroadcastOp op);

  /// A load is blocked, unless its one use is the author's k.relayout and
  /// the access takes the author's chunks: then it loads in that layout
  /// (no conversion through shared memory). The same for a load that
  /// reaches a tile.unstack through reshapes, in the layout it wants.
  LogicalResult visitLoad(LoadOp op);

  /// A store takes its value's layout, unless the author's layout has wider
  /// vectors than this access allows (its alignment promise): then the value
  /// is converted to the kernel's blocked layout (stored at the access's
  /// alignment where a masked or stacked value did not narrow the kernel's
  /// vectors, see VectorWidth.cpp) -- narrowed to divide the last
  /// dimension, to what the access allows, and to single elements where the
  /// destination's last stride is not 1.
  LogicalResult visitStore(StoreOp op);

  /// `k.relayout`: the blocked layout of the result's shape with the
  /// author's vector (conversions this pass inserts are not visited).
  LogicalResult visitRelayout(ConvertLayoutOp op);

  /// A shuffle's result keeps the source's layout, in which `dim` must be
  /// the thread's lane bits over `span` lanes (see ShuffleXorOp); `what`
  /// names the mask or lane in messages.
  LogicalResult visitShuffle(Operation *op, int64_t dim, int64_t span,
                             const std::string &what);

  LogicalResult visitReshape(ReshapeOp op);

  /// The layout of `type` without sliced dimensions that puts every element
  /// in the thread that holds it in `from`, the widest such vector first
  /// (so that converting to it moves no data); the blocked layout of `type`
  /// when there is none.
  FailureOr<LayoutAttr> compactLayout(LayoutAttr from, RankedTensorType type,
                                      Operation *op);

  /// tile.stack: the parts in one layout without sliced dimensions (the
  /// first laid-out part's, made compact), the result in it with the
  /// parts' count times its vector.
  LogicalResult visitStack(StackOp op);

  /// tile.unstack: the source in a layout without sliced dimensions whose
  /// vector holds whole groups of the parts' count (converted to one when
  /// not), the parts in it with the vector divided by the count.
  LogicalResult visitUnstack(UnstackOp op);

  func::FuncOp kernel;
  int64_t threads;
  int64_t vector;
  /// rebroadcast's copies: (value, layout) -> the value in that layout.
  llvm::DenseMap<std::pair<Value, LayoutAttr>, Value> rebroadcasts;
};

} // namespace mlir::tile

#endif // TILEJIT_LIB_DIALECT_TILE_TRANSFORMS_LAYOUTASSIGNER_H
