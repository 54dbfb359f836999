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
// for a user that needs another). This file holds the walk (LayoutAssigner.h)
// and the pass; the rules of the ops that move elements are OpLayouts.cpp's.
//
//===----------------------------------------------------------------------===//
#include "tilejit/Dialect/Tile/Transforms/Passes.h"

#include "LayoutAssigner.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::tile {
#define GEN_PASS_DEF_ASSIGNLAYOUTS
#include "tilejit/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

void mlir::tile::setLayout(Value v, LayoutAttr layout) {
  auto type = cast<RankedTensorType>(v.getType());
  auto laidOut =
      RankedTensorType::get(type.getShape(), type.getElementType(), layout);
  v.setType(laidOut);
  // A constant's value carries its type too.
  if (auto constant = v.getDefiningOp<arith::ConstantOp>())
    if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue()))
      constant.setValueAttr(dense.reshape(laidOut));
}

LogicalResult LayoutAssigner::run() {
  WalkResult result = kernel.walk<WalkOrder::PreOrder>([&](Operation *op) {
    return failed(visit(op)) ? WalkResult::interrupt() : WalkResult::advance();
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
  eraseDead();
  return success();
}

void LayoutAssigner::eraseDead() {
  // A fragment computed again in another layout (a broadcast meeting an
  // operand laid out otherwise) leaves the first copy and its conversion
  // unused: erased, so that no shared buffer or barrier is spent on them.
  for (bool erased = true; erased;) {
    erased = false;
    SmallVector<Operation *> dead;
    kernel.walk([&](Operation *op) {
      if (op != kernel.getOperation() && isOpTriviallyDead(op))
        dead.push_back(op);
    });
    for (Operation *op : dead) // post-order: nested ops before their parent
      op->erase();
    erased = !dead.empty();
  }
}

FailureOr<LayoutAttr> LayoutAssigner::blockedLayout(RankedTensorType type,
                                                    Operation *op,
                                                    int64_t widest) {
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

LogicalResult LayoutAssigner::assignBlocked(Value v, Operation *op) {
  FailureOr<LayoutAttr> layout =
      blockedLayout(cast<RankedTensorType>(v.getType()), op);
  if (failed(layout))
    return failure();
  setLayout(v, *layout);
  return success();
}

void LayoutAssigner::convert(OpOperand &use, LayoutAttr to) {
  OpBuilder b(use.getOwner());
  auto type = cast<RankedTensorType>(use.get().getType());
  auto result =
      RankedTensorType::get(type.getShape(), type.getElementType(), to);
  use.set(
      ConvertLayoutOp::create(b, use.getOwner()->getLoc(), result, use.get()));
}

FailureOr<LayoutAttr> LayoutAssigner::operandLayout(OpOperand &use,
                                                    LayoutAttr want) {
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

LogicalResult LayoutAssigner::place(Operation *op, LayoutAttr layout) {
  setLayout(op->getResult(0), layout);
  for (OpOperand &operand : op->getOpOperands())
    if (isa<RankedTensorType>(operand.get().getType()) &&
        failed(operandLayout(operand, layout)))
      return failure();
  return success();
}

LogicalResult LayoutAssigner::visit(Operation *op) {
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
  // Each element reads its own position: laid out as its indices.
  if (isa<LoadAtOp, StoreAtOp>(op))
    return visitElementwise(op);
  if (auto match = dyn_cast<MatchAnyOp>(op))
    return visitShuffle(op, match.getDim(), 32, "");
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

LogicalResult LayoutAssigner::visitElementwise(Operation *op) {
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

bool LayoutAssigner::isBroadcastLike(Value v) {
  Operation *op = v.getDefiningOp();
  if (!op)
    return false;
  if (isa<BroadcastOp>(op))
    return true;
  return op->getNumResults() == 1 && elementwiseOver(op, isBroadcastLike);
}

FailureOr<Value> LayoutAssigner::rebroadcast(Value v, LayoutAttr to) {
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
          RankedTensorType::get(from.getShape(), from.getElementType(), sliced),
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

scf::ForOp LayoutAssigner::pendingLoop(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || layoutOf(v) || !isa<RankedTensorType>(v.getType()))
    return {};
  auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
  if (!loop || arg.getArgNumber() == 0)
    return {};
  return loop;
}

LogicalResult LayoutAssigner::visitFor(scf::ForOp loop) {
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

LogicalResult LayoutAssigner::visitYield(scf::YieldOp yield) {
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

namespace {

struct AssignLayoutsPass
    : mlir::tile::impl::AssignLayoutsBase<AssignLayoutsPass> {
  using AssignLayoutsBase::AssignLayoutsBase;
  void runOnOperation() override {
    for (auto kernel : getOperation().getOps<func::FuncOp>()) {
      auto threads =
          kernel->getAttrOfType<IntegerAttr>(TileDialect::getThreadsAttrName());
      if (!threads)
        continue;
      if (failed(checkRegisterBudget(kernel, threads.getInt())))
        return signalPassFailure();
      Operation *narrowest = nullptr;
      int64_t width = chooseVectorWidth(kernel, threads.getInt(), &narrowest);
      if (reportVectorWidth) {
        InFlightDiagnostic remark = kernel.emitRemark()
                                    << "vector width " << width
                                    << (width == 1 ? " element" : " elements");
        if (narrowest)
          remark.attachNote(narrowest->getLoc())
              << "narrowed to " << width << " by this '" << narrowest->getName()
              << "'";
      }
      if (failed(LayoutAssigner(kernel, threads.getInt(), width).run()))
        return signalPassFailure();
    }
  }
};

} // namespace
