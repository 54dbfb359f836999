//===- LoadStoreToGPU.cpp - tile.load/store to per-thread memory ops -----===//
//
// Each thread visits its chunks of the fragment (V slots, contiguous along
// the last dimension: one vector access). Outside the tensor, loads read
// zero and stores are dropped. A checked access of more than one chunk first
// asks whether the whole tile is inside (the same answer for every thread of
// the block): then its chunks go as straight-line vector accesses, and only
// tiles at the tensor's edge check chunk by chunk (on the H200 the
// per-chunk checks alone cost per_token_cast 20-30% of its bandwidth).
// Fragments with sliced layouts (reduction results) go slot by slot, and only
// the slot whose sliced coordinates are 0 stores its element; where every
// chunk holds whole reduced groups (e2m1 codes packed in pairs) those
// representatives are consecutive and go as narrower chunks, when the tile
// is inside and starts aligned to them. tile.atomic goes
// slot by slot, as memref.atomic_rmw. A gather (tile.load with rows) reads
// each chunk's row from the row tensor and checks it chunk by chunk; the
// tile check then covers the other dimensions. A scatter (tile.store with
// rows) does the same for the rows it writes. A masked store writes a chunk
// whose mask holds throughout as a chunk, others element by element.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"

#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <functional>

using namespace mlir;
using namespace mlir::tile;

namespace {

/// The global coordinates of the first element of one chunk of this thread,
/// whether the whole chunk is inside the tensor (null when the author
/// promised in-bounds access), and per element of the chunk whether that
/// element is inside (only for chunks of more than one element).
struct ChunkAccess {
  SmallVector<Value> indices;
  Value inBounds;
  SmallVector<Value> elementInBounds;
};

/// A gather's source row for the element whose dimension-0 coordinate
/// (indices[0] + the tile coordinate) is the argument; null for a plain
/// access.
using RowFn = std::function<Value(OpBuilder &, Location, Value)>;

/// A gather's or scatter's row function: the row of the element at
/// dimension-0 coordinate i is rows[i] (-1, outside every tensor, past the
/// end of rows). Empty without `rows`.
RowFn rowsOf(Value rows) {
  if (!rows)
    return {};
  return [rows](OpBuilder &b, Location l, Value i) -> Value {
    Type elt = cast<MemRefType>(rows.getType()).getElementType();
    Value inside = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, i,
                                         memref::DimOp::create(b, l, rows, 0));
    Value row =
        scf::IfOp::create(
            b, l, inside,
            [&](OpBuilder &ob, Location il) {
              scf::YieldOp::create(
                  ob, il,
                  memref::LoadOp::create(ob, il, rows, ValueRange{i})
                      .getResult());
            },
            [&](OpBuilder &ob, Location il) {
              scf::YieldOp::create(ob, il,
                                   arith::ConstantOp::create(
                                       ob, il, elt, ob.getIntegerAttr(elt, -1))
                                       .getResult());
            })
            .getResult(0);
    return arith::IndexCastOp::create(b, l, b.getIndexType(), row);
  };
}

/// rowsOf for a tile of `shape` at `base`: a tile of one row (a token's
/// row scattered or gathered) has one row for all its chunks, read once
/// here, before any of the access's branches, instead of once a chunk.
RowFn rowsOf(OpBuilder &b, Location loc, Value rows, ValueRange base,
             ArrayRef<int64_t> shape) {
  RowFn rowOf = rowsOf(rows);
  if (!rowOf || shape.empty() || shape[0] != 1)
    return rowOf;
  Value row = rowOf(b, loc, base[0]);
  return [row](OpBuilder &, Location, Value) { return row; };
}

ChunkAccess computeChunkAccess(OpBuilder &b, Location loc,
                               const ThreadMapping &mapping, LayoutAttr layout,
                               Value memref, ValueRange base,
                               ArrayRef<int64_t> shape, int64_t chunk,
                               bool checkBounds, const RowFn &rowOf) {
  auto cst = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  const int64_t width = layout.getVector();
  // Linear index of the chunk's first element.
  Value linear =
      slotLinearIndex(b, loc, layout, mapping.threadId, chunk * width);
  ChunkAccess access;
  int64_t stride = 1;
  for (int64_t s : shape)
    stride *= s;
  Value lastIndex, lastExtent;
  for (auto [dim, size] : llvm::enumerate(shape)) {
    stride /= size;
    Value coord = arith::DivUIOp::create(b, loc, linear, cst(stride));
    if (dim != 0)
      coord = arith::RemUIOp::create(b, loc, coord, cst(size));
    Value index = arith::AddIOp::create(b, loc, base[dim], coord);
    const bool gathered = rowOf && dim == 0;
    if (gathered)
      index = rowOf(b, loc, index);
    access.indices.push_back(index);
    if (!checkBounds && !gathered)
      continue;
    Value extent = memref::DimOp::create(b, loc, memref, dim);
    Value probe = index;
    if (dim + 1 == shape.size()) {
      lastIndex = index;
      lastExtent = extent;
      if (width > 1) // the chunk's last element
        probe = arith::AddIOp::create(b, loc, index, cst(width - 1));
    }
    Value inside =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, probe, extent);
    if (probe != index) // and its first (a start below 0 wraps: outside)
      inside = arith::AndIOp::create(
          b, loc, inside,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, index,
                                extent));
    access.inBounds =
        access.inBounds ? arith::AndIOp::create(b, loc, access.inBounds, inside)
                        : inside;
  }
  if (checkBounds && width > 1) {
    // Element e: the other coordinates as for the chunk, the last one + e.
    Value others = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
    for (size_t dim = 0; dim + 1 < shape.size(); ++dim) {
      Value extent = memref::DimOp::create(b, loc, memref, dim);
      Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                           access.indices[dim], extent);
      others = arith::AndIOp::create(b, loc, others, inside);
    }
    for (int64_t e = 0; e < width; ++e) {
      Value index = arith::AddIOp::create(b, loc, lastIndex, cst(e));
      Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                           index, lastExtent);
      access.elementInBounds.push_back(
          arith::AndIOp::create(b, loc, others, inside));
    }
  }
  return access;
}

/// The global coordinates of slot `slot` of a fragment with a sliced layout
/// and whether it is inside the tensor (null when promised). For a store,
/// `inBounds` also requires the slot to be its element's representative.
ChunkAccess computeSlotAccess(OpBuilder &b, Location loc,
                              const ThreadMapping &mapping, LayoutAttr layout,
                              Value memref, ValueRange base,
                              ArrayRef<int64_t> shape, int64_t slot,
                              bool checkBounds, bool forStore,
                              const RowFn &rowOf) {
  SlotCoords slotAt = slotCoords(b, loc, layout, shape, mapping.threadId, slot);
  ChunkAccess access;
  if (forStore)
    access.inBounds = slotAt.representative;
  for (auto [dim, coord] : llvm::enumerate(slotAt.coords)) {
    Value index = arith::AddIOp::create(b, loc, base[dim], coord);
    const bool gathered = rowOf && dim == 0;
    if (gathered)
      index = rowOf(b, loc, index);
    access.indices.push_back(index);
    if (!checkBounds && !gathered)
      continue;
    Value extent = memref::DimOp::create(b, loc, memref, dim);
    Value inside =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, index, extent);
    access.inBounds =
        access.inBounds ? arith::AndIOp::create(b, loc, access.inBounds, inside)
                        : inside;
  }
  return access;
}

/// The access of piece `piece` of a load or store: a slot of a sliced
/// layout (one element; for a store only its representative writes), or a
/// chunk of `layout.getVector()` elements. With `rowOf` (a gather)
/// dimension 0's coordinate is the row it gives, checked whatever
/// `checkBounds` says.
static ChunkAccess computePieceAccess(OpBuilder &b, Location loc,
                                      const ThreadMapping &mapping,
                                      LayoutAttr layout, Value memref,
                                      ValueRange base, ArrayRef<int64_t> shape,
                                      int64_t piece, bool checkBounds,
                                      bool forStore, const RowFn &rowOf = {}) {
  if (!layout.getSliced().empty())
    return computeSlotAccess(b, loc, mapping, layout, memref, base, shape,
                             piece, checkBounds, forStore, rowOf);
  return computeChunkAccess(b, loc, mapping, layout, memref, base, shape, piece,
                            checkBounds, rowOf);
}

/// Indices of element e of a chunk.
SmallVector<Value> elementIndices(OpBuilder &b, Location loc,
                                  ArrayRef<Value> first, int64_t e) {
  SmallVector<Value> indices(first.begin(), first.end());
  if (e != 0)
    indices.back() = arith::AddIOp::create(
        b, loc, indices.back(), arith::ConstantIndexOp::create(b, loc, e));
  return indices;
}

/// Loads one element (a chunk of width 1): a scalar load, zero outside.
Value loadElement(OpBuilder &b, Location loc, Value memref, Type elt,
                  const ChunkAccess &access) {
  if (!access.inBounds)
    return memref::LoadOp::create(b, loc, memref, access.indices);
  Value zero = arith::ConstantOp::create(b, loc, elt, b.getZeroAttr(elt));
  return scf::IfOp::create(
             b, loc, access.inBounds,
             [&](OpBuilder &ob, Location l) {
               scf::YieldOp::create(
                   ob, l,
                   memref::LoadOp::create(ob, l, memref, access.indices)
                       .getResult());
             },
             [&](OpBuilder &ob, Location l) {
               scf::YieldOp::create(ob, l, zero);
             })
      .getResult(0);
}

/// The alignment (bytes) of a chunk of `chunkBytes` starting at a multiple
/// of its bytes within a row of `memref`: a power of two dividing them, at
/// most what every row start promises -- a shared buffer is 16-byte aligned
/// and its rows start at multiples of their bytes' largest power-of-two
/// factor (up to 16); a kernel argument's rows at its `tile.align` promise
/// (with unit inner stride). tile-assign-layouts only gives a load or store
/// chunks that are no wider than that or whole multiples of it (or three
/// times a width it takes: a tile.stack's).
llvm::MaybeAlign chunkAlignment(Value memref, int64_t chunkBytes) {
  auto type = cast<MemRefType>(memref.getType());
  const int64_t elt = type.getElementTypeBitWidth() / 8;
  int64_t rows = elt;
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(type.getMemorySpace());
  auto [strides, offset] = type.getStridesAndOffset();
  if (space && space.getValue() == gpu::AddressSpace::Workgroup) {
    const int64_t rowBytes =
        strides.size() >= 2 &&
                !ShapedType::isDynamic(strides[strides.size() - 2])
            ? strides[strides.size() - 2] * elt
            : 16;
    rows = std::min<int64_t>(16, rowBytes & -rowBytes);
  } else {
    rows = std::max(rows, rowAlignment(memref));
  }
  // A chunk of 3 x 2^n elements (a tile.stack's) is aligned to its largest
  // power-of-two factor.
  return llvm::MaybeAlign(
      std::max<int64_t>(elt, std::min(chunkBytes & -chunkBytes, rows)));
}

/// Loads one chunk of more than one element: one vector load when it is
/// inside the tensor (or promised to be), else element by element with zeros
/// outside.
Value loadChunk(OpBuilder &b, Location loc, Value memref, VectorType chunkType,
                const ChunkAccess &access) {
  Type elt = chunkType.getElementType();
  int64_t width = chunkType.getNumElements();
  auto vectorLoad = [&](OpBuilder &ob, Location l) -> Value {
    if (width == 1)
      return vector::BroadcastOp::create(
          ob, l, chunkType,
          memref::LoadOp::create(ob, l, memref, access.indices));
    if (!cast<MemRefType>(memref.getType()).isLastDimUnitStride()) {
      // An author's chunk from elements apart: one load each.
      SmallVector<Value> elements;
      for (int64_t e = 0; e < width; ++e)
        elements.push_back(memref::LoadOp::create(
            ob, l, memref, elementIndices(ob, l, access.indices, e)));
      return vector::FromElementsOp::create(ob, l, chunkType, elements);
    }
    unsigned bytes = width * elt.getIntOrFloatBitWidth() / 8;
    return vector::LoadOp::create(ob, l, chunkType, memref, access.indices,
                                  /*nontemporal=*/false,
                                  chunkAlignment(memref, bytes));
  };
  if (!access.inBounds)
    return vectorLoad(b, loc);
  Value zero = arith::ConstantOp::create(b, loc, elt, b.getZeroAttr(elt));
  auto guarded = scf::IfOp::create(
      b, loc, access.inBounds,
      [&](OpBuilder &ob, Location l) {
        scf::YieldOp::create(ob, l, vectorLoad(ob, l));
      },
      [&](OpBuilder &ob, Location l) {
        // Only a gather's row was checked: the whole chunk is outside.
        if (access.elementInBounds.empty()) {
          scf::YieldOp::create(
              ob, l,
              vector::BroadcastOp::create(ob, l, chunkType, zero).getResult());
          return;
        }
        SmallVector<Value> elements;
        for (int64_t e = 0; e < width && width > 1; ++e) {
          auto one = scf::IfOp::create(
              ob, l, access.elementInBounds[e],
              [&](OpBuilder &ib, Location il) {
                Value v = memref::LoadOp::create(
                    ib, il, memref, elementIndices(ib, il, access.indices, e));
                scf::YieldOp::create(ib, il, v);
              },
              [&](OpBuilder &ib, Location il) {
                scf::YieldOp::create(ib, il, zero);
              });
          elements.push_back(one.getResult(0));
        }
        Value outside =
            width > 1
                ? vector::FromElementsOp::create(ob, l, chunkType, elements)
                      .getResult()
                : vector::BroadcastOp::create(ob, l, chunkType, zero)
                      .getResult();
        scf::YieldOp::create(ob, l, outside);
      });
  return guarded.getResult(0);
}

/// Stores one chunk: one vector store when inside (or promised), else element
/// by element, dropping what falls outside.
void storeChunk(OpBuilder &b, Location loc, Value memref, Value chunk,
                const ChunkAccess &access) {
  auto chunkType = cast<VectorType>(chunk.getType());
  int64_t width = chunkType.getNumElements();
  auto vectorStore = [&](OpBuilder &ob, Location l) {
    if (width == 1) {
      memref::StoreOp::create(ob, l, vector::ExtractOp::create(ob, l, chunk, 0),
                              memref, access.indices);
      return;
    }
    if (!cast<MemRefType>(memref.getType()).isLastDimUnitStride()) {
      // An author's chunk to elements apart: one store each.
      for (int64_t e = 0; e < width; ++e)
        memref::StoreOp::create(
            ob, l, vector::ExtractOp::create(ob, l, chunk, e), memref,
            elementIndices(ob, l, access.indices, e));
      return;
    }
    unsigned bytes =
        width * chunkType.getElementType().getIntOrFloatBitWidth() / 8;
    vector::StoreOp::create(ob, l, chunk, memref, access.indices,
                            /*nontemporal=*/false,
                            chunkAlignment(memref, bytes));
  };
  if (!access.inBounds) {
    vectorStore(b, loc);
    return;
  }
  scf::IfOp::create(
      b, loc, access.inBounds,
      [&](OpBuilder &ob, Location l) {
        vectorStore(ob, l);
        scf::YieldOp::create(ob, l);
      },
      [&](OpBuilder &ob, Location l) {
        // Element by element; where only a scatter's row was checked
        // (no element checks), the whole chunk is dropped.
        for (int64_t e = 0;
             e < width && width > 1 && !access.elementInBounds.empty(); ++e)
          scf::IfOp::create(
              ob, l, access.elementInBounds[e],
              [&](OpBuilder &ib, Location il) {
                memref::StoreOp::create(
                    ib, il, vector::ExtractOp::create(ib, il, chunk, e), memref,
                    elementIndices(ib, il, access.indices, e));
                scf::YieldOp::create(ib, il);
              });
        scf::YieldOp::create(ob, l);
      });
}

/// Stores the `width` elements of `value` from `first` on whose mask is
/// true and that are inside the tensor: as one chunk (storeChunk) where the
/// whole mask of a chunk holds (a row's mask: vector stores), else one
/// scalar store each.
void storeMasked(OpBuilder &b, Location loc, Value memref, Value value,
                 Value mask, int64_t first, int64_t width,
                 const ChunkAccess &access) {
  auto elementwise = [&](OpBuilder &ob, Location l) {
    for (int64_t e = 0; e < width; ++e) {
      Value write = vector::ExtractOp::create(ob, l, mask, first + e);
      Value inside = access.elementInBounds.empty() ? access.inBounds
                                                    : access.elementInBounds[e];
      if (inside)
        write = arith::AndIOp::create(ob, l, write, inside);
      Value element = vector::ExtractOp::create(ob, l, value, first + e);
      scf::IfOp::create(ob, l, write, [&](OpBuilder &ib, Location il) {
        memref::StoreOp::create(ib, il, element, memref,
                                elementIndices(ib, il, access.indices, e));
        scf::YieldOp::create(ib, il);
      });
    }
  };
  // A chunk goes as a vector only into a unit inner stride (vector.store);
  // a destination without that promise takes its elements one by one.
  if (width == 1 || !cast<MemRefType>(memref.getType()).isLastDimUnitStride()) {
    elementwise(b, loc);
    return;
  }
  Value all = vector::ExtractOp::create(b, loc, mask, first);
  SmallVector<Value> elements = {
      vector::ExtractOp::create(b, loc, value, first)};
  for (int64_t e = 1; e < width; ++e) {
    all = arith::AndIOp::create(
        b, loc, all, vector::ExtractOp::create(b, loc, mask, first + e));
    elements.push_back(vector::ExtractOp::create(b, loc, value, first + e));
  }
  auto chunkType = VectorType::get(
      {width}, cast<VectorType>(value.getType()).getElementType());
  Value chunk = vector::FromElementsOp::create(b, loc, chunkType, elements);
  scf::IfOp::create(
      b, loc, all,
      [&](OpBuilder &ob, Location l) {
        storeChunk(ob, l, memref, chunk, access);
        scf::YieldOp::create(ob, l);
      },
      [&](OpBuilder &ob, Location l) {
        elementwise(ob, l);
        scf::YieldOp::create(ob, l);
      });
}

/// Whether the tile of `shape` at `base` lies inside `memref`: per dimension
/// from `firstDim` on, base < extent and base + size <= extent (unsigned, so
/// that a base that wrapped below zero is outside). Null when no dimension
/// is asked about.
Value tileInside(OpBuilder &b, Location loc, Value memref, ValueRange base,
                 ArrayRef<int64_t> shape, size_t firstDim = 0) {
  Value all;
  for (auto [dim, size] : llvm::enumerate(shape)) {
    if (dim < firstDim)
      continue;
    Value extent = memref::DimOp::create(b, loc, memref, dim);
    Value end = arith::AddIOp::create(
        b, loc, base[dim], arith::ConstantIndexOp::create(b, loc, size));
    Value inside = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, base[dim],
                              extent),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, end, extent));
    all = all ? arith::AndIOp::create(b, loc, all, inside).getResult() : inside;
  }
  return all;
}

struct LoadOpLowering : OpConversionPattern<LoadOp> {
  LoadOpLowering(const TypeConverter &tc, MLIRContext *ctx,
                 const ThreadMapping &mapping)
      : OpConversionPattern(tc, ctx), mapping(mapping) {}

  LogicalResult
  matchAndRewrite(LoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto vecType = dyn_cast_or_null<VectorType>(
        getTypeConverter()->convertType(op.getType()));
    if (!vecType)
      return rewriter.notifyMatchFailure(op, "fragment type not convertible");
    Location loc = op.getLoc();
    LayoutAttr layout = getLayout(op.getType());
    const bool sliced = !layout.getSliced().empty();
    const int64_t width = sliced ? 1 : layout.getVector();
    auto chunkType = VectorType::get({width}, vecType.getElementType());
    const int64_t chunks = vecType.getNumElements() / width;
    ArrayRef<int64_t> shape = op.getType().getShape();
    Value rows = adaptor.getRows();
    RowFn rowOf = rowsOf(rewriter, loc, rows, adaptor.getIndices(), shape);
    auto loadAll = [&](OpBuilder &b, Location l, bool check) -> Value {
      SmallVector<Value> elements;
      for (int64_t c = 0; c < chunks; ++c) {
        ChunkAccess access = computePieceAccess(
            b, l, mapping, layout, adaptor.getSource(), adaptor.getIndices(),
            shape, c, check, /*forStore=*/false, rowOf);
        if (width == 1) {
          elements.push_back(loadElement(b, l, adaptor.getSource(),
                                         chunkType.getElementType(), access));
          continue;
        }
        Value chunk = loadChunk(b, l, adaptor.getSource(), chunkType, access);
        for (int64_t e = 0; e < width; ++e)
          elements.push_back(vector::ExtractOp::create(b, l, chunk, e));
      }
      return vector::FromElementsOp::create(b, l, vecType, elements);
    };
    // A gather's rows are checked chunk by chunk in any case; the tile
    // check covers the other dimensions.
    const size_t firstDim = rows ? 1 : 0;
    if (op.getInBounds() || sliced || chunks < 2 || firstDim == shape.size()) {
      rewriter.replaceOp(
          op,
          loadAll(rewriter, loc, !op.getInBounds() && firstDim < shape.size()));
      return success();
    }
    Value whole = tileInside(rewriter, loc, adaptor.getSource(),
                             adaptor.getIndices(), shape, firstDim);
    auto split = scf::IfOp::create(
        rewriter, loc, whole,
        [&](OpBuilder &b, Location l) {
          scf::YieldOp::create(b, l, loadAll(b, l, /*check=*/false));
        },
        [&](OpBuilder &b, Location l) {
          scf::YieldOp::create(b, l, loadAll(b, l, /*check=*/true));
        });
    rewriter.replaceOp(op, split.getResult(0));
    return success();
  }

  ThreadMapping mapping;
};

/// Whether a tile's start `start` in its last dimension is a multiple of
/// `width` elements.
Value startAligned(OpBuilder &b, Location loc, Value start, int64_t width) {
  return arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      arith::RemUIOp::create(b, loc, start,
                             arith::ConstantIndexOp::create(b, loc, width)),
      arith::ConstantIndexOp::create(b, loc, 0));
}

/// The slots of `value` (laid out by the sliced `layout`) that its
/// compactLayout keeps: each chunk's compactLanes, in order.
Value keptSlots(OpBuilder &b, Location loc, Value value, LayoutAttr layout) {
  auto type = cast<VectorType>(value.getType());
  const int64_t v = layout.getVector();
  SmallVector<int64_t> lanes = compactLanes(layout);
  SmallVector<Value> kept;
  for (int64_t c = 0; c < type.getNumElements() / v; ++c)
    for (int64_t r : lanes)
      kept.push_back(vector::ExtractOp::create(b, loc, value, c * v + r));
  return vector::FromElementsOp::create(
      b, loc,
      VectorType::get({static_cast<int64_t>(kept.size())},
                      type.getElementType()),
      kept);
}

struct StoreOpLowering : OpConversionPattern<StoreOp> {
  StoreOpLowering(const TypeConverter &tc, MLIRContext *ctx,
                  const ThreadMapping &mapping)
      : OpConversionPattern(tc, ctx), mapping(mapping) {}

  LogicalResult
  matchAndRewrite(StoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto vecType = dyn_cast<VectorType>(adaptor.getValue().getType());
    if (!vecType)
      return rewriter.notifyMatchFailure(op, "value not converted to vector");
    Location loc = op.getLoc();
    LayoutAttr layout = getLayout(op.getValue().getType());
    ArrayRef<int64_t> shape = op.getValue().getType().getShape();
    Value rows = adaptor.getRows();
    RowFn rowOf = rowsOf(rewriter, loc, rows, adaptor.getIndices(), shape);
    Value mask = adaptor.getMask();
    // Stores `value` laid out by `by`: a chunk at a time, or one slot
    // at a time (its representative's) for a sliced layout.
    auto storeAll = [&](OpBuilder &b, Location l, bool check, LayoutAttr by,
                        Value value) {
      const bool sliced = !by.getSliced().empty();
      const int64_t width = sliced ? 1 : by.getVector();
      const int64_t chunks =
          cast<VectorType>(value.getType()).getNumElements() / width;
      for (int64_t c = 0; c < chunks; ++c) {
        if (sliced && !mayRepresent(by, c)) // c is a slot when sliced
          continue;
        ChunkAccess access = computePieceAccess(
            b, l, mapping, by, adaptor.getDest(), adaptor.getIndices(), shape,
            c, check, /*forStore=*/true, rowOf);
        if (mask) {
          storeMasked(b, l, adaptor.getDest(), value, mask, c * width, width,
                      access);
          continue;
        }
        SmallVector<Value> elements;
        for (int64_t e = 0; e < width; ++e)
          elements.push_back(
              vector::ExtractOp::create(b, l, value, c * width + e));
        Value chunk = vector::FromElementsOp::create(
            b, l, VectorType::get({width}, vecType.getElementType()), elements);
        storeChunk(b, l, adaptor.getDest(), chunk, access);
      }
    };
    // A scatter's rows are checked chunk by chunk in any case; the tile
    // check covers the other dimensions.
    const size_t firstDim = rows ? 1 : 0;
    const bool check = !op.getInBounds() && firstDim < shape.size();
    const bool sliced = !layout.getSliced().empty();
    // The layout of a straight-line branch: the value's own for a tile of
    // chunks (taken where the whole tile is inside); for a reduction result
    // whose chunks hold whole groups, its representatives as chunks of
    // compactLayout (taken where, besides, the tile's start is aligned to
    // them, so that every chunk is aligned to its bytes). Null: none.
    LayoutAttr fastLayout;
    if (!mask && !sliced && vecType.getNumElements() / layout.getVector() >= 2)
      fastLayout = layout;
    if (!mask && sliced)
      if (LayoutAttr compact = compactLayout(layout);
          compact && compact.getVector() > 1 &&
          shape.back() % compact.getVector() == 0)
        fastLayout = compact;
    Value fastValue =
        !fastLayout || fastLayout == layout
            ? adaptor.getValue()
            : keptSlots(rewriter, loc, adaptor.getValue(), layout);
    Value fast;
    if (fastLayout && fastLayout != layout)
      fast = startAligned(rewriter, loc, adaptor.getIndices().back(),
                          fastLayout.getVector());
    if (fastLayout && check) {
      Value whole = tileInside(rewriter, loc, adaptor.getDest(),
                               adaptor.getIndices(), shape, firstDim);
      fast = fast
                 ? arith::AndIOp::create(rewriter, loc, whole, fast).getResult()
                 : whole;
    }
    if (!fast) {
      storeAll(rewriter, loc, check, layout, adaptor.getValue());
      rewriter.eraseOp(op);
      return success();
    }
    scf::IfOp::create(
        rewriter, loc, fast,
        [&](OpBuilder &b, Location l) {
          storeAll(b, l, /*check=*/false, fastLayout, fastValue);
          scf::YieldOp::create(b, l);
        },
        [&](OpBuilder &b, Location l) {
          storeAll(b, l, check, layout, adaptor.getValue());
          scf::YieldOp::create(b, l);
        });
    rewriter.eraseOp(op);
    return success();
  }

  ThreadMapping mapping;
};

/// tile.atomic: one memref.atomic_rmw a slot, inside the tensor and (for a
/// reduction result) from the slot that represents its element.
struct AtomicOpLowering : OpConversionPattern<AtomicOp> {
  AtomicOpLowering(const TypeConverter &tc, MLIRContext *ctx,
                   const ThreadMapping &mapping)
      : OpConversionPattern(tc, ctx), mapping(mapping) {}

  LogicalResult
  matchAndRewrite(AtomicOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto vecType = dyn_cast<VectorType>(adaptor.getValue().getType());
    if (!vecType)
      return rewriter.notifyMatchFailure(op, "value not converted to vector");
    Location loc = op.getLoc();
    RankedTensorType type = op.getValue().getType();
    const arith::AtomicRMWKind kind =
        atomicRMWKind(op.getKind(), type.getElementType());
    for (int64_t slot = 0; slot < vecType.getNumElements(); ++slot) {
      if (!mayRepresent(getLayout(type), slot))
        continue;
      ChunkAccess access = computeSlotAccess(
          rewriter, loc, mapping, getLayout(type), adaptor.getDest(),
          adaptor.getIndices(), type.getShape(), slot, /*checkBounds=*/true,
          /*forStore=*/true, /*rowOf=*/{});
      Value element =
          vector::ExtractOp::create(rewriter, loc, adaptor.getValue(), slot);
      auto rmw = [&](OpBuilder &b, Location l) {
        memref::AtomicRMWOp::create(b, l, kind, element, adaptor.getDest(),
                                    access.indices);
      };
      scf::IfOp::create(rewriter, loc, access.inBounds,
                        [&](OpBuilder &b, Location l) {
                          rmw(b, l);
                          scf::YieldOp::create(b, l);
                        });
    }
    rewriter.eraseOp(op);
    return success();
  }

  ThreadMapping mapping;
};

} // namespace

arith::AtomicRMWKind mlir::tile::atomicRMWKind(AtomicKind kind, Type elt) {
  const bool isFloat = isa<FloatType>(elt);
  switch (kind) {
  case AtomicKind::add:
    return isFloat ? arith::AtomicRMWKind::addf : arith::AtomicRMWKind::addi;
  case AtomicKind::max:
    return isFloat ? arith::AtomicRMWKind::maxnumf : arith::AtomicRMWKind::maxs;
  case AtomicKind::umax:
    return arith::AtomicRMWKind::maxu;
  }
  llvm_unreachable("unknown atomic kind");
}

int64_t mlir::tile::rowAlignment(Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  auto [strides, offset] = type.getStridesAndOffset();
  auto arg = dyn_cast<BlockArgument>(memref);
  if (!arg || strides.empty() || strides.back() != 1)
    return 1;
  if (auto func = dyn_cast<gpu::GPUFuncOp>(arg.getOwner()->getParentOp()))
    if (auto align = func.getArgAttrOfType<IntegerAttr>(
            arg.getArgNumber(), TileDialect::getAlignAttrName()))
      return align.getInt();
  return 1;
}

void mlir::tile::populateLoadStoreToGPUPatterns(const TypeConverter &converter,
                                                const ThreadMapping &mapping,
                                                RewritePatternSet &patterns) {
  patterns.add<LoadOpLowering, StoreOpLowering, AtomicOpLowering>(
      converter, patterns.getContext(), mapping);
}
