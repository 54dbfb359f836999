//===- OpLayouts.cpp - The layout rule of each op that moves elements -----===//
//
// Part of the layout walk (LayoutAssigner.h): scans keep their source's
// blocked layout; reductions slice their source's layout; broadcasts of
// reduction results un-slice it; loads are blocked unless the author's
// relayout takes them, stores take their value's layout where the access
// allows it; shuffles keep their source's layout, in which the shuffled
// dimension must be the thread's; reshapes keep the element order; stacks
// and unstacks scale their parts' vector by the parts' count.
//
//===----------------------------------------------------------------------===//
#include "LayoutAssigner.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::tile;

LogicalResult LayoutAssigner::visitScan(ScanOp op) {
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

LogicalResult LayoutAssigner::visitReduce(ReduceOp op) {
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

LogicalResult LayoutAssigner::visitBroadcast(BroadcastOp op) {
  ArrayRef<int64_t> from = op.getSource().getType().getShape();
  ArrayRef<int64_t> to = op.getType().getShape();
  SmallVector<int64_t> dims;
  for (auto [d, sizes] : llvm::enumerate(llvm::zip(from, to)))
    if (std::get<0>(sizes) != std::get<1>(sizes))
      dims.push_back(d);
  // A splat not placed yet goes straight into the slice below: a blocked
  // layout of its own would need at least an element a thread (a (rows, 1)
  // splat of fewer rows than threads has none).
  bool ok = false;
  LayoutAttr result;
  if (!isSplatLike(op.getSource().getDefiningOp()) ||
      layoutOf(op.getSource())) {
    FailureOr<LayoutAttr> source = operandLayout(op->getOpOperand(0), {});
    if (failed(source))
      return failure();
    result = source->unslice(dims);
    ok = from == ArrayRef<int64_t>(source->getCanonicalShape()) &&
         llvm::all_of(dims, [&](int64_t d) {
           return source->isSliced(d) && source->getShape()[d] == to[d];
         });
  }
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

LogicalResult LayoutAssigner::visitLoad(LoadOp op) {
  RankedTensorType type = op.getType();
  if (std::optional<int64_t> v = groupVector(kernel, op, threads)) {
    setLayout(op.getResult(), LayoutAttr::get(op->getContext(), type.getShape(),
                                              threads, *v, {}));
    return success();
  }
  if (op->hasOneUse())
    if (auto relayout = dyn_cast<ConvertLayoutOp>(*op->user_begin());
        relayout && relayout.getVector()) {
      const int64_t v = static_cast<int64_t>(*relayout.getVector());
      if (type.getNumElements() % (threads * v) == 0 &&
          accessTakes(kernel, op.getSource(), type, v)) {
        setLayout(
            op.getResult(),
            LayoutAttr::get(op->getContext(), type.getShape(), threads, v, {}));
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

LogicalResult LayoutAssigner::visitStore(StoreOp op) {
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

LogicalResult LayoutAssigner::visitRelayout(ConvertLayoutOp op) {
  RankedTensorType type = op.getType();
  const int64_t v = static_cast<int64_t>(op.getVector().value_or(vector));
  if (type.getNumElements() % (threads * v) != 0)
    return op.emitOpError()
           << "to vectors of " << v << " elements: fragment "
           << RankedTensorType::get(type.getShape(), type.getElementType())
           << " has " << type.getNumElements()
           << " elements; requires a multiple of threads x vector = "
           << threads * v;
  auto layout =
      LayoutAttr::get(op->getContext(), type.getShape(), threads, v, {});
  // A splat or an iota is made in the author's layout itself (computed
  // there, nothing moved); any other source keeps its own.
  const bool splat = isSplatLike(op.getSource().getDefiningOp());
  if (failed(operandLayout(op->getOpOperand(0), splat ? layout : nullptr)))
    return failure();
  setLayout(op.getResult(), layout);
  return success();
}

LogicalResult LayoutAssigner::visitShuffle(Operation *op, int64_t dim,
                                           int64_t span,
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

LogicalResult LayoutAssigner::visitReshape(ReshapeOp op) {
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

FailureOr<LayoutAttr> LayoutAssigner::compactLayout(LayoutAttr from,
                                                    RankedTensorType type,
                                                    Operation *op) {
  MLIRContext *ctx = op->getContext();
  if (from.getSliced().empty())
    return LayoutAttr::get(ctx, type.getShape(), threads, from.getVector(), {});
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

LogicalResult LayoutAssigner::visitStack(StackOp op) {
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
            LayoutAttr::get(op->getContext(), op.getType().getShape(), threads,
                            common->getVector() * parts, {}));
  return success();
}

LogicalResult LayoutAssigner::visitUnstack(UnstackOp op) {
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
    convert(op->getOpOperand(0),
            LayoutAttr::get(op->getContext(), type.getShape(), threads, v, {}));
  }
  for (Value part : op.getParts())
    setLayout(part,
              LayoutAttr::get(op->getContext(),
                              cast<RankedTensorType>(part.getType()).getShape(),
                              threads, v / parts, {}));
  return success();
}
