//===- VectorWidth.cpp - The vector width of a kernel's layouts ----------===//
//
// What layout assignment decides for the whole kernel before it walks it:
// the widest vector every access and fragment allows (reductions' results,
// masked stores and the author's k.relayout layouts aside), and whether
// every fragment fits a thread's registers.
//
//===----------------------------------------------------------------------===//
#include "LayoutUtils.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::tile;

/// Values computed from a reduction's result without a broadcast in between:
/// their global stores use one element a thread and do not limit the vector
/// width.
static llvm::DenseSet<Value> reducedValues(func::FuncOp kernel) {
  llvm::DenseSet<Value> reduced;
  // Until nothing changes: a loop's carried value is known to be reduced
  // only once its yield has been seen.
  for (size_t before = SIZE_MAX; before != reduced.size();) {
    before = reduced.size();
    kernel.walk<WalkOrder::PreOrder>([&](Operation *op) {
      // Carried through loops and branches.
      if (auto loop = dyn_cast<scf::ForOp>(op)) {
        for (auto [init, arg, result] :
             llvm::zip(loop.getInitArgs(), loop.getRegionIterArgs(),
                       loop.getResults()))
          if (reduced.contains(init) || reduced.contains(result)) {
            reduced.insert(arg);
            reduced.insert(result);
          }
        return;
      }
      if (auto yield = dyn_cast<scf::YieldOp>(op)) {
        for (OpOperand &use : yield->getOpOperands())
          if (reduced.contains(use.get()))
            reduced.insert(
                yield->getParentOp()->getResult(use.getOperandNumber()));
        return;
      }
      if (isa<scf::IfOp>(op))
        return;
      bool fromReduce = isa<ReduceOp>(op);
      if (!isa<BroadcastOp>(op))
        for (Value operand : op->getOperands())
          fromReduce |= reduced.contains(operand);
      if (fromReduce)
        for (Value result : op->getResults())
          reduced.insert(result);
    });
  }
  return reduced;
}

/// The widest vector (elements) an access of `fragment` to `memref` can use:
/// a shared tile's rows are 16-byte aligned; a global tensor needs a unit
/// inner stride and its `tile.align` promise. The last fragment dimension
/// must divide by it.
int64_t mlir::tile::accessWidth(func::FuncOp kernel, Value memref,
                                RankedTensorType fragment) {
  auto type = cast<MemRefType>(memref.getType());
  int64_t bytes = type.getElementTypeBitWidth() / 8;
  if (bytes == 0)
    return 1;
  int64_t w = 1;
  if (getSharedTile(memref)) {
    // A shared tile: 16-byte aligned, rows of its static last size.
    w = 16 / bytes;
    while (w > 1 && type.getShape().back() % w != 0)
      w /= 2;
  } else {
    auto [strides, offset] = type.getStridesAndOffset();
    auto arg = dyn_cast<BlockArgument>(memref);
    if (strides.empty() || strides.back() != 1 || !arg)
      return 1;
    auto align = kernel.getArgAttrOfType<IntegerAttr>(
        arg.getArgNumber(), TileDialect::getAlignAttrName());
    if (!align)
      return 1;
    w = std::min<int64_t>(16, align.getInt()) / bytes;
  }
  while (w > 1 && fragment.getShape().back() % w != 0)
    w /= 2;
  return std::max<int64_t>(w, 1);
}

/// The widest vector (in elements) every access of the kernel can use: each
/// load and store of an unreduced fragment must reach a tensor whose last
/// stride is 1 and whose rows are aligned (`tile.align`) to the vector's
/// bytes, with a last fragment dimension the vector divides; and every
/// unreduced fragment must hold a whole number of vectors per thread. 16
/// bytes at most; 1 when any access cannot; no more than a shuffle's inner
/// dimensions hold. (Splats and constants take their users' layouts and do
/// not count, nor do fragments the author laid out with k.relayout, stacks
/// and unstacks, their reshapes, loads read straight into such a layout
/// (an unstack's only where the access takes its groups), or stores of
/// stacked fragments or of the author's layouts.)
/// A fragment lives in its threads' registers: one that needs more than a
/// thread's 255 32-bit registers cannot be held and would compile for
/// minutes into spills, so it is refused at once, at the author's line.
LogicalResult mlir::tile::checkRegisterBudget(func::FuncOp kernel,
                                              int64_t threads) {
  constexpr int64_t kBudgetBytes = 255 * 4;
  WalkResult result = kernel.walk([&](Operation *op) {
    for (Value v : op->getResults()) {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!type || !type.hasStaticShape())
        continue;
      const int64_t bits = type.getElementType().isIntOrFloat()
                               ? type.getElementType().getIntOrFloatBitWidth()
                               : 32;
      const int64_t perThread = (type.getNumElements() + threads - 1) / threads;
      const int64_t bytes = perThread * std::max<int64_t>(bits, 8) / 8;
      if (bytes <= kBudgetBytes)
        continue;
      op->emitOpError() << "fragment "
                        << RankedTensorType::get(type.getShape(),
                                                 type.getElementType())
                        << " holds " << perThread << " elements (" << bytes
                        << " bytes) in each of the kernel's " << threads
                        << " threads; requires at most " << kBudgetBytes
                        << " bytes a thread (255 registers): a smaller tile "
                           "or more threads";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// Whether the one use of `load` is the author's k.relayout (a layout of
/// the author's, which need not fit the kernel's vector width).
static bool feedsRelayout(LoadOp load) {
  if (!load->hasOneUse())
    return false;
  auto relayout = dyn_cast<ConvertLayoutOp>(*load->user_begin());
  return relayout && relayout.getVector();
}

/// Whether `v` is in a layout of the author's: a k.relayout, a tile.stack
/// or tile.unstack (laid out from their parts or source), a reshape of one
/// (a reshape keeps its source's layout), or an element-wise op on such
/// values and splats (it takes its first fragment operand's layout).
static bool laidOutByAuthor(Value v) {
  Operation *op = v.getDefiningOp();
  if (!op)
    return false;
  if (auto relayout = dyn_cast<ConvertLayoutOp>(op))
    return relayout.getVector().has_value();
  if (isa<StackOp, UnstackOp>(op)) // their parts' vector times the count
    return true;
  if (isa<ReshapeOp>(op))
    return laidOutByAuthor(op->getOperand(0));
  return elementwiseOver(op, laidOutByAuthor);
}

/// Whether `v` is a tile.stack's result, or a reshape or element-wise op
/// of one: its chunks are its parts' (a store takes them when its access
/// allows, else converts them), not the kernel's.
static bool stacked(Value v) {
  Operation *op = v.getDefiningOp();
  if (!op)
    return false;
  if (isa<StackOp>(op))
    return true;
  if (isa<ReshapeOp>(op))
    return stacked(op->getOperand(0));
  return elementwiseOver(op, stacked);
}

int64_t mlir::tile::chooseVectorWidth(func::FuncOp kernel, int64_t threads,
                                      Operation **narrowest) {
  llvm::DenseSet<Value> reduced = reducedValues(kernel);
  int64_t width = 16; // elements; lowered below by the element sizes
  kernel.walk([&](Operation *op) {
    // The op that lowers the width last is the one that decides it.
    const int64_t before = width;
    llvm::scope_exit record([&] {
      if (narrowest && width < before)
        *narrowest = op;
    });
    // A shuffle's dimension is the thread's when the dimensions after it
    // hold one vector: it asks for that width (a narrower one than the
    // accesses allow is fine; a wider one fails in visitShuffle).
    if (isa<ShuffleXorOp, ShuffleIdxOp, MatchAnyOp>(op)) {
      ArrayRef<int64_t> shape =
          cast<RankedTensorType>(op->getOperand(0).getType()).getShape();
      int64_t inner = 1;
      for (int64_t d = cast<IntegerAttr>(op->getAttr("dim")).getInt() + 1;
           d < static_cast<int64_t>(shape.size()); ++d)
        inner *= shape[d];
      if (llvm::isPowerOf2_64(inner))
        width = std::min(width, inner);
    }
    // A load whose one use is the author's k.relayout is laid out by it.
    if (auto load = dyn_cast<LoadOp>(op)) {
      if (feedsRelayout(load) || groupVector(kernel, load, threads))
        return;
      width = std::min(width,
                       accessWidth(kernel, load.getSource(), load.getType()));
    }
    // A masked store (a mapping's entries, a row's mask) does not narrow
    // the kernel's vectors: where its destination promises less alignment
    // its chunks are stored at that alignment.
    // Nor does a store of the author's layout: its chunks are stored at
    // the destination's alignment, one element at a time where they are
    // not contiguous there.
    if (auto store = dyn_cast<StoreOp>(op);
        store && !reduced.contains(store.getValue()) && !store.getMask() &&
        !stacked(store.getValue()) && !laidOutByAuthor(store.getValue()))
      width = std::min(width, accessWidth(kernel, store.getDest(),
                                          store.getValue().getType()));
    if (isSplatLike(op)) // placed in their users' layouts
      return;
    if (auto convert = dyn_cast<ConvertLayoutOp>(op);
        convert && convert.getVector())
      return; // the author's layout
    for (Value result : op->getResults())
      if (auto fragment = dyn_cast<RankedTensorType>(result.getType());
          fragment && !reduced.contains(result) && !laidOutByAuthor(result))
        while (width > 1 && fragment.getNumElements() % (threads * width) != 0)
          width /= 2;
  });
  return width;
}
