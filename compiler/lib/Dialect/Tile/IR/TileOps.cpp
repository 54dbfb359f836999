//===- TileOps.cpp - Verifiers of the tile dialect's operations ----------===//
#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "llvm/Support/MathExtras.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::tile;

/// Checks what a load and a store share: one index per dimension of the
/// global tensor, a fragment of the same rank and element type, and no empty
/// fragment dimension.
static LogicalResult verifyTileAccess(Operation *op, MemRefType global,
                                      RankedTensorType fragment,
                                      size_t numIndices) {
  int64_t rank = global.getRank();
  if (static_cast<int64_t>(numIndices) != rank)
    return op->emitOpError() << "expects " << rank << " indices for a rank-"
                             << rank << " tensor, got " << numIndices;
  if (fragment.getRank() != rank)
    return op->emitOpError() << "fragment rank " << fragment.getRank()
                             << " differs from tensor rank " << rank;
  if (fragment.getElementType() != global.getElementType())
    return op->emitOpError()
           << "fragment element type " << fragment.getElementType()
           << " differs from tensor element type " << global.getElementType();
  for (auto [dim, size] : llvm::enumerate(fragment.getShape()))
    if (size <= 0)
      return op->emitOpError() << "fragment dimension " << dim << " is " << size
                               << "; requires a positive size";
  return success();
}

/// A gather's or scatter's `rows`: a rank-1 tensor of i32 or i64 indices
/// of the rows of a tensor of rank 2 or more (in rank 1 a row index would
/// pick each element of a vector access).
static LogicalResult verifyRows(Operation *op, Value rows, MemRefType tensor) {
  if (!rows)
    return success();
  auto type = cast<MemRefType>(rows.getType());
  if (type.getRank() != 1 || (!type.getElementType().isInteger(32) &&
                              !type.getElementType().isInteger(64)))
    return op->emitOpError() << "rows must be a rank-1 tensor of i32 or i64 "
                                "row indices, got "
                             << type;
  if (tensor.getRank() < 2)
    return op->emitOpError() << "with rows requires a tensor of rank 2 or "
                                "more (rows of elements), got "
                             << tensor;
  return success();
}

LogicalResult LoadOp::verify() {
  if (failed(verifyTileAccess(*this, getSource().getType(),
                              getResult().getType(), getIndices().size())))
    return failure();
  // How a fragment spreads over the kernel's threads is tile-assign-layouts'
  // to check (a multiple of the thread count), or the fused gemm epilogue's
  // (a vector of any length, read per accumulator element).
  return verifyRows(*this, getRows(), getSource().getType());
}

LogicalResult LoadAtOp::verify() {
  MemRefType source = getSource().getType();
  RankedTensorType result = getResult().getType();
  if (static_cast<int64_t>(getIndices().size()) != source.getRank())
    return emitOpError() << "expects " << source.getRank()
                         << " index fragments for a rank-" << source.getRank()
                         << " tensor, got " << getIndices().size();
  if (result.getElementType() != source.getElementType())
    return emitOpError() << "result element type " << result.getElementType()
                         << " differs from tensor element type "
                         << source.getElementType();
  for (auto [d, index] : llvm::enumerate(getIndices())) {
    auto type = cast<RankedTensorType>(index.getType());
    if (type.getShape() != result.getShape() ||
        (!type.getElementType().isInteger(32) &&
         !type.getElementType().isInteger(64)))
      return emitOpError() << "index " << d << " is " << type
                           << "; requires an i32 or i64 fragment of the "
                              "result's shape "
                           << result;
  }
  return success();
}

/// Index fragments of `shape`, one a dimension of a rank-`rank` tensor.
static LogicalResult verifyIndexFragments(Operation *op, ValueRange indices,
                                          int64_t rank,
                                          RankedTensorType shape) {
  if (static_cast<int64_t>(indices.size()) != rank)
    return op->emitOpError()
           << "expects " << rank << " index fragments for a rank-" << rank
           << " tensor, got " << indices.size();
  for (auto [d, index] : llvm::enumerate(indices)) {
    auto type = cast<RankedTensorType>(index.getType());
    if (type.getShape() != shape.getShape() ||
        (!type.getElementType().isInteger(32) &&
         !type.getElementType().isInteger(64)))
      return op->emitOpError()
             << "index " << d << " is " << type
             << "; requires an i32 or i64 fragment of the shape of " << shape;
  }
  return success();
}

LogicalResult StoreAtOp::verify() {
  MemRefType dest = getDest().getType();
  RankedTensorType value = getValue().getType();
  if (value.getElementType() != dest.getElementType())
    return emitOpError() << "value element type " << value.getElementType()
                         << " differs from tensor element type "
                         << dest.getElementType();
  if (failed(verifyIndexFragments(*this, getIndices(), dest.getRank(), value)))
    return failure();
  if (Value mask = getMask()) {
    auto type = cast<RankedTensorType>(mask.getType());
    if (type.getShape() != value.getShape() ||
        !type.getElementType().isInteger(1))
      return emitOpError() << "mask is " << type
                           << "; requires an i1 fragment of the shape of "
                           << value;
  }
  if (std::optional<AtomicKind> kind = getCombine()) {
    Type elt = value.getElementType();
    const bool isInt = elt.isInteger(32) || elt.isInteger(64);
    const bool isFloat = elt.isF32() || elt.isF64();
    if (!(isInt || (isFloat && *kind != AtomicKind::umax)))
      return emitOpError() << "cannot combine " << elt << " with "
                           << stringifyAtomicKind(*kind)
                           << "; requires i32, i64 (or f32, f64 for add and "
                              "max)";
  }
  return success();
}

LogicalResult StoreOp::verify() {
  if (failed(verifyTileAccess(*this, getDest().getType(), getValue().getType(),
                              getIndices().size())))
    return failure();
  if (Value mask = getMask()) {
    auto type = cast<RankedTensorType>(mask.getType());
    if (type.getShape() != getValue().getType().getShape() ||
        !type.getElementType().isInteger(1))
      return emitOpError() << "mask " << type
                           << " must be an i1 fragment of the value's shape "
                           << getValue().getType();
  }
  return verifyRows(*this, getRows(), getDest().getType());
}

LogicalResult AtomicOp::verify() {
  if (failed(verifyTileAccess(*this, getDest().getType(), getValue().getType(),
                              getIndices().size())))
    return failure();
  Type elt = getValue().getType().getElementType();
  bool isFloat = elt.isF32() || elt.isF64();
  bool isInt = elt.isInteger(32) || elt.isInteger(64);
  if (getKind() == AtomicKind::umax ? !isInt : !(isFloat || isInt))
    return emitOpError() << stringifyAtomicKind(getKind()) << " of " << elt
                         << " is not supported; requires "
                         << (getKind() == AtomicKind::umax
                                 ? "i32 or i64"
                                 : "f32, f64, i32 or i64");
  return success();
}

LogicalResult TransposeOp::verify() {
  RankedTensorType source = getSource().getType(), result = getType();
  int64_t rank = source.getRank();
  if (rank < 2)
    return emitOpError() << "fragment " << source << " has rank " << rank
                         << "; requires rank 2 or more";
  if (source.getElementType() != result.getElementType())
    return emitOpError() << "result element type " << result.getElementType()
                         << " differs from source element type "
                         << source.getElementType();
  SmallVector<int64_t> expected(source.getShape());
  std::swap(expected[rank - 1], expected[rank - 2]);
  if (result.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "result " << result
                         << " is not the source with its last two dimensions "
                            "swapped";
  for (int64_t i = 0; i + 2 < rank; ++i)
    if (source.getDimSize(i) != 1)
      return emitOpError() << "fragment " << source << " has dimension " << i
                           << " of size " << source.getDimSize(i)
                           << "; requires 1 before the last two";
  return success();
}

LogicalResult ReduceOp::verify() {
  RankedTensorType source = getSource().getType(), result = getType();
  int64_t dim = static_cast<int64_t>(getDim());
  if (dim >= source.getRank())
    return emitOpError() << "dim " << dim << " is out of range for fragment "
                         << source << " of rank " << source.getRank();
  if (source.getElementType() != result.getElementType())
    return emitOpError() << "result element type " << result.getElementType()
                         << " differs from source element type "
                         << source.getElementType();
  if (getKind() != ReduceKind::sum && getKind() != ReduceKind::max &&
      getKind() != ReduceKind::min && !isa<FloatType>(source.getElementType()))
    return emitOpError() << stringifyReduceKind(getKind())
                         << " requires a float fragment, got "
                         << source.getElementType();
  SmallVector<int64_t> expected(source.getShape());
  expected[dim] = 1;
  if (result.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "result " << result
                         << " is not the source with dimension " << dim
                         << " of size 1";
  return success();
}

LogicalResult ScanOp::verify() {
  RankedTensorType source = getSource().getType(), result = getType();
  int64_t dim = static_cast<int64_t>(getDim());
  if (dim >= source.getRank())
    return emitOpError() << "dim " << dim << " is out of range for fragment "
                         << source << " of rank " << source.getRank();
  if (source.getShape() != result.getShape() ||
      source.getElementType() != result.getElementType())
    return emitOpError() << "result " << result << " differs from source "
                         << source;
  Type elt = source.getElementType();
  if (!elt.isInteger(32) && !elt.isInteger(64) && !elt.isF32())
    return emitOpError() << "requires an i32, i64 or f32 fragment, got " << elt;
  return success();
}

/// What tile.stack and tile.unstack check alike: at least two parts of
/// one shape and element type with a last dimension of 1, and the stacked
/// fragment of that shape with the parts' count as its last dimension.
static LogicalResult verifyStack(Operation *op, RankedTensorType stacked,
                                 TypeRange parts) {
  if (parts.size() < 2)
    return op->emitOpError()
           << "requires at least 2 parts, got " << parts.size();
  auto first = cast<RankedTensorType>(parts.front());
  for (Type part : parts) {
    auto type = cast<RankedTensorType>(part);
    if (type.getShape() != first.getShape() ||
        type.getElementType() != first.getElementType())
      return op->emitOpError() << "parts must have one shape and element "
                                  "type; got "
                               << first << " and " << type;
  }
  if (first.getRank() == 0 || first.getShape().back() != 1)
    return op->emitOpError() << "parts must have a last dimension of size 1, "
                                "got "
                             << first;
  SmallVector<int64_t> shape(first.getShape());
  shape.back() = static_cast<int64_t>(parts.size());
  if (stacked.getShape() != ArrayRef<int64_t>(shape) ||
      stacked.getElementType() != first.getElementType())
    return op->emitOpError()
           << "stacked fragment " << stacked << " must be "
           << RankedTensorType::get(shape, first.getElementType()) << " for "
           << parts.size() << " parts of " << first;
  return success();
}

LogicalResult StackOp::verify() {
  return verifyStack(*this, getType(), getParts().getTypes());
}

LogicalResult UnstackOp::verify() {
  return verifyStack(*this, getSource().getType(), getParts().getTypes());
}

LogicalResult ConvertLayoutOp::verify() {
  RankedTensorType source = getSource().getType(), result = getType();
  if (source.getShape() != result.getShape() ||
      source.getElementType() != result.getElementType())
    return emitOpError() << "result " << result
                         << " is not the source's shape and element type ("
                         << source << ")";
  if (std::optional<uint64_t> v = getVector(); v && !llvm::isPowerOf2_64(*v))
    return emitOpError() << "vector " << *v << " is not a power of two";
  return success();
}

/// What tile.shuffle_xor and tile.shuffle_idx check alike.
static LogicalResult verifyShuffle(Operation *op, RankedTensorType type,
                                   int64_t dim) {
  if (dim >= type.getRank())
    return op->emitOpError()
           << "dim " << dim << " is out of range for fragment " << type
           << " of rank " << type.getRank();
  Type elt = type.getElementType();
  if (!elt.isIntOrFloat() || elt.getIntOrFloatBitWidth() != 32)
    return op->emitOpError() << "requires 32-bit elements, got " << elt
                             << "; cast to f32 or i32 first";
  return success();
}

LogicalResult ShuffleXorOp::verify() {
  RankedTensorType type = getSource().getType();
  int64_t dim = static_cast<int64_t>(getDim());
  if (failed(verifyShuffle(*this, type, dim)))
    return failure();
  int64_t mask = static_cast<int64_t>(getMask());
  if (mask <= 0 || mask >= 32)
    return emitOpError() << "mask " << mask
                         << " must be in 1..31 (lanes of one warp)";
  if (mask >= type.getDimSize(dim))
    return emitOpError() << "mask " << mask << " reaches past dimension " << dim
                         << " of size " << type.getDimSize(dim);
  return success();
}

LogicalResult MatchAnyOp::verify() {
  RankedTensorType type = getSource().getType();
  const int64_t dim = static_cast<int64_t>(getDim());
  if (dim >= type.getRank())
    return emitOpError() << "dim " << dim << " is out of range for fragment "
                         << type << " of rank " << type.getRank();
  Type elt = type.getElementType();
  if (!elt.isInteger(32) && !elt.isInteger(64))
    return emitOpError() << "requires i32 or i64 elements, got " << elt;
  RankedTensorType result = getResult().getType();
  if (result.getShape() != type.getShape() ||
      !result.getElementType().isInteger(32))
    return emitOpError() << "result " << result
                         << " must be an i32 fragment of the source's shape";
  return success();
}

LogicalResult GridWaitOp::verify() {
  auto func = dyn_cast<func::FuncOp>((*this)->getParentOp());
  if (!func)
    return emitOpError() << "must be directly in a kernel's body (not in a "
                            "loop or a branch)";
  if (!func->hasAttr(TileDialect::getProgrammaticAttrName()))
    return emitOpError() << "requires a kernel with the '"
                         << TileDialect::getProgrammaticAttrName()
                         << "' attribute";
  // The second of two waits is the error.
  for (GridWaitOp other : func.getBody().getOps<GridWaitOp>()) {
    if (other == *this)
      return success();
    return emitOpError() << "follows another in the same kernel; requires at "
                            "most one wait";
  }
  return success();
}

LogicalResult ShuffleIdxOp::verify() {
  RankedTensorType type = getSource().getType();
  int64_t dim = static_cast<int64_t>(getDim());
  if (failed(verifyShuffle(*this, type, dim)))
    return failure();
  const int64_t segment = std::min<int64_t>(type.getDimSize(dim), 32);
  if (!llvm::isPowerOf2_64(segment))
    return emitOpError() << "dimension " << dim << " of size "
                         << type.getDimSize(dim)
                         << " must be a power of two when below 32";
  int64_t lane = static_cast<int64_t>(getLane());
  if (lane < 0 || lane >= segment)
    return emitOpError() << "lane " << lane << " must be in 0.." << segment - 1;
  return success();
}

LogicalResult IotaOp::verify() {
  RankedTensorType type = getType();
  if (static_cast<int64_t>(getDim()) >= type.getRank())
    return emitOpError() << "dim " << getDim() << " is out of range for "
                         << "fragment " << type << " of rank "
                         << type.getRank();
  if (!type.getElementType().isSignlessInteger())
    return emitOpError() << "requires an integer fragment, got "
                         << type.getElementType();
  return success();
}

LogicalResult BroadcastOp::verify() {
  RankedTensorType source = getSource().getType(), result = getType();
  if (source.getElementType() != result.getElementType() ||
      source.getRank() != result.getRank())
    return emitOpError() << "result " << result
                         << " must have the rank and element type of source "
                         << source;
  for (auto [dim, sizes] :
       llvm::enumerate(llvm::zip(source.getShape(), result.getShape())))
    if (std::get<0>(sizes) != 1 && std::get<0>(sizes) != std::get<1>(sizes))
      return emitOpError() << "source dimension " << dim << " is "
                           << std::get<0>(sizes) << "; requires 1 or the "
                           << "result's " << std::get<1>(sizes);
  return success();
}

LogicalResult ReshapeOp::verify() {
  RankedTensorType source = getSource().getType(), result = getType();
  if (source.getElementType() != result.getElementType() ||
      source.getNumElements() != result.getNumElements())
    return emitOpError() << "result " << result
                         << " must have the element type and element count of "
                         << "source " << source;
  return success();
}

static bool isWorkgroup(MemRefType type) {
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(type.getMemorySpace());
  return space && space.getValue() == gpu::AddressSpace::Workgroup;
}

LogicalResult AllocSharedOp::verify() {
  MemRefType type = getType();
  if (!type.hasStaticShape() || !isWorkgroup(type))
    return emitOpError() << "result " << type
                         << " must be statically shaped in "
                            "#gpu.address_space<workgroup>";
  // Rows stay 16-byte aligned (cp.async pieces, vector accesses).
  const int64_t bits = type.getElementTypeBitWidth();
  if (std::optional<int64_t> pad = getRowPad(); pad && (*pad * bits) % 128)
    return emitOpError() << "row_pad " << *pad << " of " << bits
                         << "-bit elements must be a multiple of 16 bytes";
  return success();
}

LogicalResult CopyOp::verify() {
  MemRefType src = getSource().getType(), dst = getDest().getType();
  if (!isWorkgroup(dst) || !dst.hasStaticShape())
    return emitOpError() << "destination " << dst
                         << " must be a shared tile (tile.alloc_shared)";
  if (static_cast<int64_t>(getIndices().size()) != src.getRank())
    return emitOpError() << "expects " << src.getRank()
                         << " indices for a rank-" << src.getRank()
                         << " tensor, got " << getIndices().size();
  if (src.getRank() != dst.getRank() ||
      src.getElementType() != dst.getElementType())
    return emitOpError() << "shared tile " << dst
                         << " must have the rank and element type of " << src;
  return success();
}

LogicalResult GemmOp::verify() {
  MemRefType a = getA().getType(), b = getB().getType();
  RankedTensorType acc = getAcc().getType();
  if (a.getRank() != 2 || b.getRank() != 2 || acc.getRank() != 2)
    return emitOpError() << "operands must be 2-D (a: M x K, b: N x K, acc: "
                            "M x N)";
  const bool ta = getTransposeA(), tb = getTransposeB();
  // M x K and N x K, whichever way a and b are stored.
  const int64_t m = a.getDimSize(ta ? 1 : 0), ka = a.getDimSize(ta ? 0 : 1),
                n = b.getDimSize(tb ? 1 : 0), kb = b.getDimSize(tb ? 0 : 1);
  if (ka != kb || acc.getDimSize(0) != m || acc.getDimSize(1) != n)
    return emitOpError() << "shapes " << a << ", " << b << " and " << acc
                         << " do not make acc(M x N) += "
                         << (ta ? "(a(K x M))^T" : "a(M x K)") << " * "
                         << (tb ? "b(K x N)" : "b(N x K)^T");
  Type elt = a.getElementType(), eltB = b.getElementType();
  auto half = [](Type t) { return t.isBF16() || t.isF16(); };
  const bool mixed = (half(elt) && eltB.isF32()) || (elt.isF32() && half(eltB));
  if (!mixed && (elt != eltB || !(half(elt) || elt.isF32() ||
                                  isa<Float8E4M3FNType, Float8E5M2Type>(elt))))
    return emitOpError() << "operands must both be bf16, both f16, both f32 "
                            "(multiplied as tf32), both fp8 (f8E4M3FN, "
                            "f8E5M2) or one bf16 or f16 and one f32 "
                            "(multiplied as tf32), got "
                         << elt << " and " << eltB;
  if ((ta || tb) && (isa<Float8E4M3FNType, Float8E5M2Type>(elt) ||
                     isa<Float8E4M3FNType, Float8E5M2Type>(eltB)))
    return emitOpError() << "transposed operands are read by mma.sync, which "
                            "takes no fp8; got "
                         << elt << " and " << eltB;
  if (getRoundTf32() && !elt.isF32() && !eltB.isF32())
    return emitOpError() << "round_tf32 requires an f32 operand, got " << elt
                         << " and " << eltB;
  if (!acc.getElementType().isF32())
    return emitOpError() << "accumulator must be f32, got "
                         << acc.getElementType();
  return success();
}

LogicalResult PipelinedOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInits().size() + 1 ||
      !body.getArgument(0).getType().isIndex())
    return emitOpError() << "body must take the step (index) and one "
                            "argument per iter_arg";
  for (auto [arg, init] :
       llvm::zip(body.getArguments().drop_front(), getInits()))
    if (arg.getType() != init.getType())
      return emitOpError() << "body argument type " << arg.getType()
                           << " differs from iter_arg type " << init.getType();
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getValues().getTypes() != getInits().getTypes() ||
      getResults().getTypes() != getInits().getTypes())
    return emitOpError() << "yielded values and results must have the "
                            "iter_args' types";
  return success();
}

AllocSharedOp mlir::tile::getSharedTile(Value memref) {
  while (auto view = memref.getDefiningOp<memref::SubViewOp>())
    memref = view.getSource();
  return memref.getDefiningOp<AllocSharedOp>();
}

#define GET_OP_CLASSES
#include "tilejit/Dialect/Tile/IR/TileOps.cpp.inc"
