//===- AssignLayouts.cpp - Give every fragment a #tile.layout ------------===//
//
// One walk over each kernel in program order (an op before the ops of its
// regions). Loads, transposes and splats start blocked layouts of their own
// shape; a loop's carried fragments keep their initial value's layout, and
// an if's results take its then-branch's; reductions slice their source's
// layout; broadcasts of reduction results un-slice it; reshapes keep the
// element order; shuffles keep their source's layout, in which the shuffled
// dimension must be the thread's; stacks and unstacks scale their parts'
// vector by the parts' count (the elements stay in their threads);
// element-wise ops take their operands'
// common layout (a broadcast's, or a mask computed from broadcasts, is
// computed again in the others' layout rather than converted). Splats and
// constants are placed lazily, in the layout their first user needs (and cloned
// for a user that needs another).
//
//===----------------------------------------------------------------------===//
#include "tilejit/Dialect/Tile/Transforms/Passes.h"

#include "LayoutUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::tile {
#define GEN_PASS_DEF_ASSIGNLAYOUTS
#include "tilejit/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

static void setLayout(Value v, LayoutAttr layout) {
  auto type = cast<RankedTensorType>(v.getType());
  auto laidOut =
      RankedTensorType::get(type.getShape(), type.getElementType(), layout);
  v.setType(laidOut);
  // A constant's value carries its type too.
  if (auto constant = v.getDefiningOp<arith::ConstantOp>())
    if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue()))
      constant.setValueAttr(dense.reshape(laidOut));
}

namespace {

/// Assigns the layouts of one kernel.
class LayoutAssigner {
public:
  LayoutAssigner(func::FuncOp kernel, int64_t threads, int64_t vector)
      : kernel(kernel), threads(threads), vector(vector) {}

  LogicalResult run() {
    WalkResult result = kernel.walk<WalkOrder::PreOrder>([&](Operation *op) {
      return failed(visit(op)) ? WalkResult::interrupt()
                               : WalkResult::advance();
    });
    if (result.wasInterrupted())
      return failure();
    // Splats and constants no one used in a layout: blocked, or erased
    // (users first, so that what only they used goes too).
    SmallVector<Operation *> pending;
    kernel.walk([&](Operation *op) {
      if (isSplatLike(op) && !layoutOf(op->getResult(0)))
        pending.push_back(op);
    });
    for (Operation *op : llvm::reverse(pending)) {
      if (op->use_empty()) {
        op->erase();
        continue;
      }
      if (layoutOf(op->getResult(0)))
        continue; // placed with a user
      FailureOr<LayoutAttr> blocked =
          blockedLayout(cast<RankedTensorType>(op->getResult(0).getType()), op);
      if (failed(blocked) || failed(place(op, *blocked)))
        return failure();
    }
    return success();
  }

private:
  /// The blocked layout of `type`'s own shape (`op` reports the error),
  /// with vectors of at most `widest` elements.
  FailureOr<LayoutAttr> blockedLayout(RankedTensorType type, Operation *op,
                                      int64_t widest = INT64_MAX) {
    int64_t v0 = std::min(vector, widest);
    while (v0 > 1 && type.getNumElements() % (threads * v0) != 0)
      v0 /= 2;
    if (type.getNumElements() % threads != 0)
      return op->emitOpError()
             << "fragment "
             << RankedTensorType::get(type.getShape(), type.getElementType())
             << " has " << type.getNumElements()
             << " elements; requires a multiple of the kernel's " << threads
             << " threads";
    return LayoutAttr::get(op->getContext(), type.getShape(), threads, v0, {});
  }

  LogicalResult assignBlocked(Value v, Operation *op) {
    FailureOr<LayoutAttr> layout =
        blockedLayout(cast<RankedTensorType>(v.getType()), op);
    if (failed(layout))
      return failure();
    setLayout(v, *layout);
    return success();
  }

  /// Makes `use`'s owner read its value in layout `to`: a
  /// tile.convert_layout just before the owner.
  static void convert(OpOperand &use, LayoutAttr to) {
    OpBuilder b(use.getOwner());
    auto type = cast<RankedTensorType>(use.get().getType());
    auto result =
        RankedTensorType::get(type.getShape(), type.getElementType(), to);
    use.set(ConvertLayoutOp::create(b, use.getOwner()->getLoc(), result,
                                    use.get()));
  }

  /// The layout of operand `v`, placing a lazily laid-out splat or constant
  /// in `want` (or blocked when `want` is null).
  FailureOr<LayoutAttr> operandLayout(OpOperand &use, LayoutAttr want) {
    Value v = use.get();
    if (auto loop = pendingLoop(v)) {
      // A loop-carried splat not placed yet: placed where first wanted.
      unsigned i = cast<BlockArgument>(v).getArgNumber() - 1;
      FailureOr<LayoutAttr> layout =
          operandLayout(loop.getInitArgsMutable()[i], want);
      if (failed(layout))
        return failure();
      setLayout(v, *layout);
      setLayout(loop.getResult(i), *layout);
      return *layout;
    }
    if (LayoutAttr layout = layoutOf(v)) {
      if (!want || layout == want || !isSplatLike(v.getDefiningOp()))
        return layout;
      // A splat already placed elsewhere: a copy in the wanted layout.
    }
    Operation *def = v.getDefiningOp();
    if (!isSplatLike(def)) {
      if (failed(assignBlocked(v, use.getOwner())))
        return failure();
      return layoutOf(v);
    }
    if (!want) {
      if (!layoutOf(v)) {
        FailureOr<LayoutAttr> blocked =
            blockedLayout(cast<RankedTensorType>(v.getType()), def);
        if (failed(blocked) || failed(place(def, *blocked)))
          return failure();
      }
      return layoutOf(v);
    }
    auto type = cast<RankedTensorType>(v.getType());
    // Every user that asks for a layout (an element-wise op, a loop or an
    // if) has operands and results of the splat's type.
    assert(want.getNumElements() == type.getNumElements() &&
           "a splat placed in the layout of a fragment of another size");
    if (!layoutOf(v)) {
      if (failed(place(def, want)))
        return failure();
      return want;
    }
    OpBuilder b(def);
    Operation *copy = b.clone(*def);
    use.set(copy->getResult(0));
    if (failed(place(copy, want)))
      return failure();
    return want;
  }

  /// Lays out a splat-like op in `layout`, and the splat-like ops it is
  /// computed from.
  LogicalResult place(Operation *op, LayoutAttr layout) {
    setLayout(op->getResult(0), layout);
    for (OpOperand &operand : op->getOpOperands())
      if (isa<RankedTensorType>(operand.get().getType()) &&
          failed(operandLayout(operand, layout)))
        return failure();
    return success();
  }

  LogicalResult visit(Operation *op) {
    if (op == kernel.getOperation() || isSplatLike(op))
      return success();
    if (auto load = dyn_cast<LoadOp>(op))
      return visitLoad(load);
    if (isa<TransposeOp>(op)) {
      if (auto transpose = dyn_cast<TransposeOp>(op)) {
        FailureOr<LayoutAttr> source =
            operandLayout(transpose->getOpOperand(0), {});
        if (failed(source))
          return failure();
        if (!source->getSliced().empty())
          return op->emitOpError()
                 << "of a reduction result is not supported; broadcast it "
                    "first";
      }
      return assignBlocked(op->getResult(0), op);
    }
    if (auto store = dyn_cast<StoreOp>(op))
      return visitStore(store);
    if (auto relayout = dyn_cast<ConvertLayoutOp>(op))
      return visitRelayout(relayout);
    if (isa<AtomicOp>(op))
      return operandLayout(op->getOpOperand(0), {});
    if (auto gemm = dyn_cast<GemmOp>(op)) {
      // mma.sync: the accumulator goes through shared memory, so it keeps
      // the layout it has (see GemmToMMA.cpp).
      FailureOr<LayoutAttr> acc = operandLayout(gemm.getAccMutable(), {});
      if (failed(acc))
        return failure();
      if (!acc->getSliced().empty()) { // a broadcast: its result is not one
        acc = blockedLayout(gemm.getType(), op);
        if (failed(acc))
          return failure();
        convert(gemm.getAccMutable(), *acc);
      }
      setLayout(gemm.getResult(), *acc);
      return success();
    }
    if (auto loop = dyn_cast<scf::ForOp>(op))
      return visitFor(loop);
    if (auto yield = dyn_cast<scf::YieldOp>(op))
      return visitYield(yield);
    if (isa<scf::IfOp>(op)) // results: from the then-branch's yield
      return success();
    if (auto reduce = dyn_cast<ReduceOp>(op))
      return visitReduce(reduce);
    if (auto scan = dyn_cast<ScanOp>(op))
      return visitScan(scan);
    if (auto broadcast = dyn_cast<BroadcastOp>(op))
      return visitBroadcast(broadcast);
    if (auto reshape = dyn_cast<ReshapeOp>(op))
      return visitReshape(reshape);
    if (auto stack = dyn_cast<StackOp>(op))
      return visitStack(stack);
    if (auto unstack = dyn_cast<UnstackOp>(op))
      return visitUnstack(unstack);
    if (auto shuffle = dyn_cast<ShuffleXorOp>(op))
      return visitShuffle(
          op, shuffle.getDim(),
          static_cast<int64_t>(llvm::PowerOf2Ceil(shuffle.getMask() + 1)),
          "with mask " + std::to_string(shuffle.getMask()) + " ");
    if (auto shuffle = dyn_cast<ShuffleIdxOp>(op))
      return visitShuffle(
          op, shuffle.getDim(),
          std::min<int64_t>(
              shuffle.getSource().getType().getDimSize(shuffle.getDim()), 32),
          "from lane " + std::to_string(shuffle.getLane()) + " ");
    bool hasFragment =
        llvm::any_of(op->getResultTypes(), llvm::IsaPred<RankedTensorType>) ||
        llvm::any_of(op->getOperandTypes(), llvm::IsaPred<RankedTensorType>);
    if (!hasFragment)
      return success();
    if (!op->hasTrait<OpTrait::Elementwise>() || op->getNumRegions() != 0)
      return op->emitOpError() << "is not supported on fragments";
    return visitElementwise(op);
  }

  LogicalResult visitElementwise(Operation *op) {
    // The common layout: that of the first operand that is neither a splat
    // nor broadcast-like (computed again in any layout from a smaller
    // source); else the first that is not a splat.
    LayoutAttr target;
    for (bool broadcasts : {false, true})
      for (Value operand : op->getOperands())
        if (LayoutAttr l = layoutOf(operand);
            !target && l && !isSplatLike(operand.getDefiningOp()) &&
            (broadcasts || !isBroadcastLike(operand)))
          target = l;
    for (OpOperand &use : op->getOpOperands()) {
      if (!isa<RankedTensorType>(use.get().getType()))
        continue;
      FailureOr<LayoutAttr> l = operandLayout(use, target);
      if (failed(l))
        return failure();
      if (!target)
        target = *l;
      if (*l == target)
        continue;
      if (!isBroadcastLike(use.get())) {
        convert(use, target);
        continue;
      }
      FailureOr<Value> again = rebroadcast(use.get(), target);
      if (failed(again))
        return failure();
      use.set(*again);
    }
    for (Value result : op->getResults())
      setLayout(result, target);
    return success();
  }

  /// Whether `v` is a broadcast, or element-wise on broadcast-like values
  /// and splats (a row's mask from a reduction): computable again in any
  /// layout from the broadcasts' sources, which are smaller.
  static bool isBroadcastLike(Value v) {
    Operation *op = v.getDefiningOp();
    if (!op)
      return false;
    if (isa<BroadcastOp>(op))
      return true;
    return op->getNumResults() == 1 && elementwiseOver(op, isBroadcastLike);
  }

  /// Broadcast-like `v` computed again in layout `to`, just after its
  /// definition: each broadcast from its source converted to `to`'s slice
  /// (a reduction result: a few elements a thread, often in registers),
  /// the element-wise ops cloned. Once per value and layout.
  FailureOr<Value> rebroadcast(Value v, LayoutAttr to) {
    if (layoutOf(v) == to)
      return v;
    auto [cached, inserted] = rebroadcasts.try_emplace({v, to}, Value());
    if (!inserted)
      return cached->second;
    Operation *op = v.getDefiningOp();
    auto type = cast<RankedTensorType>(v.getType());
    auto result =
        RankedTensorType::get(type.getShape(), type.getElementType(), to);
    OpBuilder b(op->getContext());
    b.setInsertionPointAfter(op);
    Value copy;
    if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
      // From the original source: visitBroadcast may have converted it.
      Value source = broadcast.getSource();
      if (auto converted = source.getDefiningOp<ConvertLayoutOp>();
          converted && !converted.getVector())
        source = converted.getSource();
      auto from = cast<RankedTensorType>(source.getType());
      LayoutAttr sliced = to;
      for (auto [d, sizes] :
           llvm::enumerate(llvm::zip(from.getShape(), type.getShape())))
        if (std::get<0>(sizes) != std::get<1>(sizes))
          sliced = sliced.slice(d);
      if (layoutOf(source) != sliced)
        source = ConvertLayoutOp::create(
            b, op->getLoc(),
            RankedTensorType::get(from.getShape(), from.getElementType(),
                                  sliced),
            source);
      copy = BroadcastOp::create(b, op->getLoc(), result, source);
    } else {
      Operation *clone = b.clone(*op);
      for (OpOperand &use : clone->getOpOperands()) {
        if (!isa<RankedTensorType>(use.get().getType()))
          continue;
        if (isSplatLike(use.get().getDefiningOp())) {
          if (failed(operandLayout(use, to)))
            return failure();
          continue;
        }
        FailureOr<Value> operand = rebroadcast(use.get(), to);
        if (failed(operand))
          return failure();
        use.set(*operand);
      }
      clone->getResult(0).setType(result);
      copy = clone->getResult(0);
    }
    rebroadcasts[{v, to}] = copy;
    return copy;
  }

  /// The loop of `v` if it is a carried fragment whose initial value is a
  /// splat that no layout has been chosen for yet.
  static scf::ForOp pendingLoop(Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || layoutOf(v) || !isa<RankedTensorType>(v.getType()))
      return {};
    auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
    if (!loop || arg.getArgNumber() == 0)
      return {};
    return loop;
  }

  /// Carried fragments keep their initial value's layout; a splat's is
  /// chosen by the first use in the body that wants one (or by the yield).
  LogicalResult visitFor(scf::ForOp loop) {
    for (auto [init, arg, result] :
         llvm::zip(loop.getInitArgsMutable(), loop.getRegionIterArgs(),
                   loop.getResults())) {
      if (!isa<RankedTensorType>(arg.getType()))
        continue;
      if (isSplatLike(init.get().getDefiningOp()) && !layoutOf(init.get()))
        continue; // pending
      FailureOr<LayoutAttr> layout = operandLayout(init, {});
      if (failed(layout))
        return failure();
      setLayout(arg, *layout);
      setLayout(result, *layout);
    }
    return success();
  }

  /// A loop body yields its carried fragments in their layouts; the first
  /// branch of an if to yield a fragment sets the result's layout.
  LogicalResult visitYield(scf::YieldOp yield) {
    Operation *parent = yield->getParentOp();
    for (OpOperand &use : yield->getOpOperands()) {
      if (!isa<RankedTensorType>(use.get().getType()))
        continue;
      Value result = parent->getResult(use.getOperandNumber());
      LayoutAttr want = layoutOf(result);
      FailureOr<LayoutAttr> layout = operandLayout(use, want);
      if (failed(layout))
        return failure();
      if (!want) {
        setLayout(result, *layout);
        if (auto loop = dyn_cast<scf::ForOp>(parent)) {
          // A pending carried splat never used in the body: the yield's.
          unsigned i = use.getOperandNumber();
          setLayout(loop.getRegionIterArgs()[i], *layout);
          FailureOr<LayoutAttr> init =
              operandLayout(loop.getInitArgsMutable()[i], *layout);
          if (failed(init))
            return failure();
        }
        continue;
      }
      if (*layout != want)
        convert(use, want);
    }
    return success();
  }

  /// tile.scan: its source's layout, blocked (a reduction's result is
  /// broadcast back to every copy first).
  LogicalResult visitScan(ScanOp op) {
    FailureOr<LayoutAttr> layout = operandLayout(op->getOpOperand(0), {});
    if (failed(layout))
      return failure();
    if (!layout->getSliced().empty()) {
      layout = blockedLayout(op.getType(), op);
      if (failed(layout))
        return failure();
      convert(op->getOpOperand(0), *layout);
    }
    setLayout(op.getResult(), *layout);
    return success();
  }

  LogicalResult visitReduce(ReduceOp op) {
    FailureOr<LayoutAttr> source = operandLayout(op->getOpOperand(0), {});
    if (failed(source))
      return failure();
    RankedTensorType type = op.getSource().getType();
    if (type.getShape() != ArrayRef<int64_t>(source->getCanonicalShape()))
      return op.emitOpError() << "of a reshaped reduction result is not "
                                 "supported; reduce before reshaping";
    int64_t dim = static_cast<int64_t>(op.getDim());
    if (type.getDimSize(dim) == 1) { // nothing to combine: same elements
      setLayout(op.getResult(), *source);
      return success();
    }
    ArrayRef<int64_t> shape = source->getShape();
    int64_t inner = 1;
    for (int64_t d = dim + 1; d < static_cast<int64_t>(shape.size()); ++d)
      inner *= shape[d];
    // A dimension of any size whose elements all lie in one thread's
    // slots: the dimensions after it hold whole rounds of the block's
    // vectors (a multiple of threads x vector elements).
    int64_t round = threads * source->getVector();
    if (inner % round == 0) {
      setLayout(op.getResult(), source->slice(dim));
      return success();
    }
    if (!llvm::isPowerOf2_64(source->getVector())) {
      // A stack's chunks (3 x 2^n elements): the exchange below works on
      // the bits of the element index, so the source goes to the blocked
      // layout of its shape first.
      FailureOr<LayoutAttr> blocked = blockedLayout(type, op);
      if (failed(blocked))
        return failure();
      convert(op->getOpOperand(0), *blocked);
      source = *blocked;
      shape = source->getShape();
      round = threads * source->getVector();
      if (inner % round == 0) {
        setLayout(op.getResult(), source->slice(dim));
        return success();
      }
    }
    if (!llvm::isPowerOf2_64(threads) || !llvm::isPowerOf2_64(shape[dim]) ||
        !llvm::isPowerOf2_64(inner))
      return op.emitOpError()
             << "over dimension " << dim << " of "
             << RankedTensorType::get(type.getShape(), type.getElementType())
             << " requires power-of-two sizes from that dimension on and a "
                "power-of-two thread count (the kernel has "
             << threads << "), or the dimensions after it to hold a multiple "
             << "of threads x vector = " << round << " elements (they hold "
             << inner << ")";
    // Threads exchange partial results (shuffles, shared memory) when a
    // reduced bit of the element index is a thread bit.
    int64_t low = llvm::Log2_64(inner), high = low + llvm::Log2_64(shape[dim]);
    int64_t threadLow = llvm::Log2_64(source->getVector());
    int64_t threadHigh = threadLow + llvm::Log2_64(threads);
    bool acrossThreads = low < threadHigh && high > threadLow;
    Type elt = type.getElementType();
    if (acrossThreads && elt.getIntOrFloatBitWidth() != 32)
      return op.emitOpError() << "across threads requires 32-bit elements, got "
                              << elt << "; cast to f32 or i32 first";
    setLayout(op.getResult(), source->slice(dim));
    return success();
  }

  LogicalResult visitBroadcast(BroadcastOp op) {
    FailureOr<LayoutAttr> source = operandLayout(op->getOpOperand(0), {});
    if (failed(source))
      return failure();
    ArrayRef<int64_t> from = op.getSource().getType().getShape();
    ArrayRef<int64_t> to = op.getType().getShape();
    SmallVector<int64_t> dims;
    for (auto [d, sizes] : llvm::enumerate(llvm::zip(from, to)))
      if (std::get<0>(sizes) != std::get<1>(sizes))
        dims.push_back(d);
    LayoutAttr result = source->unslice(dims);
    bool ok = from == ArrayRef<int64_t>(source->getCanonicalShape()) &&
              llvm::all_of(dims, [&](int64_t d) {
                return source->isSliced(d) && source->getShape()[d] == to[d];
              });
    if (!ok) {
      // Any other fragment is converted to the slice of the result's
      // blocked layout, from which the broadcast is free again.
      FailureOr<LayoutAttr> blocked = blockedLayout(op.getType(), op);
      if (failed(blocked))
        return failure();
      LayoutAttr sliced = *blocked;
      for (int64_t d : dims)
        sliced = sliced.slice(d);
      if (isSplatLike(op.getSource().getDefiningOp())) {
        if (failed(operandLayout(op->getOpOperand(0), sliced)))
          return failure();
      } else {
        convert(op->getOpOperand(0), sliced);
      }
      result = *blocked;
    }
    setLayout(op.getResult(), result);
    return success();
  }

  /// A load is blocked, unless its one use is the author's k.relayout and
  /// the access takes the author's chunks: then it loads in that layout
  /// (no conversion through shared memory). The same for a load that
  /// reaches a tile.unstack through reshapes, in the layout it wants.
  LogicalResult visitLoad(LoadOp op) {
    RankedTensorType type = op.getType();
    if (std::optional<int64_t> v = groupVector(kernel, op, threads)) {
      setLayout(
          op.getResult(),
          LayoutAttr::get(op->getContext(), type.getShape(), threads, *v, {}));
      return success();
    }
    if (op->hasOneUse())
      if (auto relayout = dyn_cast<ConvertLayoutOp>(*op->user_begin());
          relayout && relayout.getVector()) {
        const int64_t v = static_cast<int64_t>(*relayout.getVector());
        if (type.getNumElements() % (threads * v) == 0 &&
            accessTakes(kernel, op.getSource(), type, v)) {
          setLayout(op.getResult(),
                    LayoutAttr::get(op->getContext(), type.getShape(), threads,
                                    v, {}));
          return success();
        }
      }
    // Blocked, in vectors its access allows: the kernel's width did not
    // count a load whose one use is the author's k.relayout, and where the
    // access does not take the author's chunks, a vector wider than the
    // tile's rows would read across them.
    FailureOr<LayoutAttr> layout =
        blockedLayout(type, op, accessWidth(kernel, op.getSource(), type));
    if (failed(layout))
      return failure();
    setLayout(op.getResult(), *layout);
    return success();
  }

  /// A store takes its value's layout, unless the author's layout has wider
  /// vectors than this access allows (its alignment promise): then the value
  /// is converted to the kernel's blocked layout (stored at the access's
  /// alignment where a masked or stacked value did not narrow the kernel's
  /// vectors, see VectorWidth.cpp) -- narrowed to divide the last
  /// dimension, to what the access allows, and to single elements where the
  /// destination's last stride is not 1.
  LogicalResult visitStore(StoreOp op) {
    FailureOr<LayoutAttr> layout = operandLayout(op->getOpOperand(0), {});
    if (failed(layout))
      return failure();
    RankedTensorType type = op.getValue().getType();
    if (layout->getSliced().empty() &&
        !accessTakes(kernel, op.getDest(), type, layout->getVector())) {
      // Chunks within a row: a vector dividing the last dimension.
      auto [strides, offset] = op.getDest().getType().getStridesAndOffset();
      const bool unit = !strides.empty() && strides.back() == 1;
      const int64_t last = type.getShape().back();
      // And no wider than the access allows: the kernel's width did not
      // count a store of the author's layout (VectorWidth.cpp).
      FailureOr<LayoutAttr> blocked =
          blockedLayout(type, op,
                        std::min(unit ? last & -last : 1,
                                 accessWidth(kernel, op.getDest(), type)));
      if (failed(blocked))
        return failure();
      convert(op->getOpOperand(0), *blocked);
      layout = *blocked;
    }
    // A mask goes element by element beside the value: in its layout.
    if (op.getMask()) {
      if (!layout->getSliced().empty())
        return op.emitOpError()
               << "with a mask is not supported for a reduction result; "
                  "broadcast the value first";
      OpOperand &mask = op.getMaskMutable()[0];
      FailureOr<LayoutAttr> l = operandLayout(mask, *layout);
      if (failed(l))
        return failure();
      if (*l != *layout)
        convert(mask, *layout);
    }
    return success();
  }

  /// `k.relayout`: the blocked layout of the result's shape with the
  /// author's vector (conversions this pass inserts are not visited).
  LogicalResult visitRelayout(ConvertLayoutOp op) {
    if (failed(operandLayout(op->getOpOperand(0), {})))
      return failure();
    RankedTensorType type = op.getType();
    const int64_t v = static_cast<int64_t>(op.getVector().value_or(vector));
    if (type.getNumElements() % (threads * v) != 0)
      return op.emitOpError()
             << "to vectors of " << v << " elements: fragment "
             << RankedTensorType::get(type.getShape(), type.getElementType())
             << " has " << type.getNumElements()
             << " elements; requires a multiple of threads x vector = "
             << threads * v;
    setLayout(op.getResult(), LayoutAttr::get(op->getContext(), type.getShape(),
                                              threads, v, {}));
    return success();
  }

  /// A shuffle's result keeps the source's layout, in which `dim` must be
  /// the thread's lane bits over `span` lanes (see ShuffleXorOp); `what`
  /// names the mask or lane in messages.
  LogicalResult visitShuffle(Operation *op, int64_t dim, int64_t span,
                             const std::string &what) {
    FailureOr<LayoutAttr> source = operandLayout(op->getOpOperand(0), {});
    if (failed(source))
      return failure();
    auto type = cast<RankedTensorType>(op->getOperand(0).getType());
    auto plain = RankedTensorType::get(type.getShape(), type.getElementType());
    if (!source->getSliced().empty())
      return op->emitOpError() << "of a reduction result is not supported; "
                                  "broadcast it first";
    int64_t inner = 1;
    for (int64_t d = dim + 1; d < type.getRank(); ++d)
      inner *= type.getDimSize(d);
    if (inner != source->getVector())
      return op->emitOpError()
             << "along dimension " << dim << " of " << plain
             << " requires the dimensions after it to hold one vector of "
                "the kernel's layout ("
             << source->getVector() << " elements; they hold " << inner
             << "): reshape so that they do";
    if (type.getDimSize(dim) % span != 0 || threads % span != 0)
      return op->emitOpError()
             << what << "along dimension " << dim << " of " << plain
             << " requires that dimension's size (" << type.getDimSize(dim)
             << ") and the thread count (" << threads << ") to be multiples of "
             << span;
    setLayout(op->getResult(0), *source);
    return success();
  }

  LogicalResult visitReshape(ReshapeOp op) {
    FailureOr<LayoutAttr> source = operandLayout(op->getOpOperand(0), {});
    if (failed(source))
      return failure();
    if (!source->getSliced().empty()) {
      setLayout(op.getResult(), *source); // same elements, same slots
      return success();
    }
    ArrayRef<int64_t> shape = op.getType().getShape();
    setLayout(op.getResult(), LayoutAttr::get(op->getContext(), shape, threads,
                                              source->getVector(), {}));
    return success();
  }

  /// The layout of `type` without sliced dimensions that puts every element
  /// in the thread that holds it in `from`, the widest such vector first
  /// (so that converting to it moves no data); the blocked layout of `type`
  /// when there is none.
  FailureOr<LayoutAttr> compactLayout(LayoutAttr from, RankedTensorType type,
                                      Operation *op) {
    MLIRContext *ctx = op->getContext();
    if (from.getSliced().empty())
      return LayoutAttr::get(ctx, type.getShape(), threads, from.getVector(),
                             {});
    for (int64_t v = static_cast<int64_t>(
             llvm::bit_floor(static_cast<uint64_t>(from.getSlots())));
         v >= 1; v /= 2) {
      if (type.getNumElements() % (threads * v) != 0)
        continue;
      bool same = true;
      for (int64_t t = 0; t < threads && same; ++t)
        for (int64_t s = 0; s < from.getSlots() && same; ++s)
          same = (from.getElement(t, s) / v) % threads == t;
      if (same)
        return LayoutAttr::get(ctx, type.getShape(), threads, v, {});
    }
    return blockedLayout(type, op);
  }

  /// tile.stack: the parts in one layout without sliced dimensions (the
  /// first laid-out part's, made compact), the result in it with the
  /// parts' count times its vector.
  LogicalResult visitStack(StackOp op) {
    auto partType = cast<RankedTensorType>(op.getParts().front().getType());
    LayoutAttr first;
    for (Value part : op.getParts())
      if (LayoutAttr l = layoutOf(part);
          !first && l && !isSplatLike(part.getDefiningOp()))
        first = l;
    if (!first) {
      FailureOr<LayoutAttr> l = operandLayout(op->getOpOperand(0), {});
      if (failed(l))
        return failure();
      first = *l;
    }
    FailureOr<LayoutAttr> common = compactLayout(first, partType, op);
    if (failed(common))
      return failure();
    for (OpOperand &use : op->getOpOperands()) {
      FailureOr<LayoutAttr> l = operandLayout(use, *common);
      if (failed(l))
        return failure();
      if (*l != *common)
        convert(use, *common);
    }
    const int64_t parts = op.getNumOperands();
    setLayout(op.getResult(),
              LayoutAttr::get(op->getContext(), op.getType().getShape(),
                              threads, common->getVector() * parts, {}));
    return success();
  }

  /// tile.unstack: the source in a layout without sliced dimensions whose
  /// vector holds whole groups of the parts' count (converted to one when
  /// not), the parts in it with the vector divided by the count.
  LogicalResult visitUnstack(UnstackOp op) {
    FailureOr<LayoutAttr> source = operandLayout(op->getOpOperand(0), {});
    if (failed(source))
      return failure();
    RankedTensorType type = op.getSource().getType();
    const int64_t parts = op.getNumResults();
    int64_t v = source->getVector();
    if (!source->getSliced().empty() || v % parts != 0) {
      v = unstackVector(type, parts, threads);
      if (type.getNumElements() % (threads * v) != 0)
        return op.emitOpError()
               << "of "
               << RankedTensorType::get(type.getShape(), type.getElementType())
               << " requires a multiple of threads x " << parts << " = "
               << threads * parts << " elements (each thread holds whole "
               << "groups of " << parts << ")";
      convert(
          op->getOpOperand(0),
          LayoutAttr::get(op->getContext(), type.getShape(), threads, v, {}));
    }
    for (Value part : op.getParts())
      setLayout(part, LayoutAttr::get(
                          op->getContext(),
                          cast<RankedTensorType>(part.getType()).getShape(),
                          threads, v / parts, {}));
    return success();
  }

  func::FuncOp kernel;
  int64_t threads;
  int64_t vector;
  /// rebroadcast's copies: (value, layout) -> the value in that layout.
  llvm::DenseMap<std::pair<Value, LayoutAttr>, Value> rebroadcasts;
};

struct AssignLayoutsPass
    : mlir::tile::impl::AssignLayoutsBase<AssignLayoutsPass> {
  void runOnOperation() override {
    for (auto kernel : getOperation().getOps<func::FuncOp>()) {
      auto threads =
          kernel->getAttrOfType<IntegerAttr>(TileDialect::getThreadsAttrName());
      if (!threads)
        continue;
      if (failed(checkRegisterBudget(kernel, threads.getInt())))
        return signalPassFailure();
      int64_t width = chooseVectorWidth(kernel, threads.getInt());
      if (failed(LayoutAssigner(kernel, threads.getInt(), width).run()))
        return signalPassFailure();
    }
  }
};

} // namespace
