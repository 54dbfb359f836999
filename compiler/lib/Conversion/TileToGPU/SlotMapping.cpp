//===- SlotMapping.cpp - Which element each slot of a thread holds -------===//
//
// The arithmetic of #tile.layout at run time: from (thread, slot) to the
// element's linear index in the distribution shape and to its coordinates
// in the fragment; and the type conversion of fragments to vectors.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"

#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::tile;

LayoutAttr mlir::tile::getLayout(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor ? dyn_cast_or_null<LayoutAttr>(tensor.getEncoding())
                : LayoutAttr();
}

void mlir::tile::populateFragmentTypeConversion(TypeConverter &converter) {
  converter.addConversion([](Type type) { return type; });
  converter.addConversion([](RankedTensorType type) -> std::optional<Type> {
    LayoutAttr layout = getLayout(type);
    if (!layout)
      return std::nullopt;
    return VectorType::get({layout.getSlots()}, type.getElementType());
  });
}

static Value constantIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value mlir::tile::slotLinearIndex(OpBuilder &b, Location loc, LayoutAttr layout,
                                  Value threadId, int64_t slot) {
  // ((slot / V) * T + tid) * V + slot % V
  const int64_t v = layout.getVector(), t = layout.getThreads();
  Value linear = arith::AddIOp::create(b, loc, threadId,
                                       constantIndex(b, loc, (slot / v) * t));
  if (v > 1)
    linear = arith::MulIOp::create(b, loc, linear, constantIndex(b, loc, v));
  if (slot % v != 0)
    linear =
        arith::AddIOp::create(b, loc, linear, constantIndex(b, loc, slot % v));
  return linear;
}

Value mlir::tile::linearize(OpBuilder &b, Location loc, ValueRange coords,
                            ArrayRef<int64_t> shape) {
  Value index = constantIndex(b, loc, 0);
  for (auto [c, size] : llvm::zip(coords, shape)) {
    index = arith::MulIOp::create(b, loc, index, constantIndex(b, loc, size));
    index = arith::AddIOp::create(b, loc, index, c);
  }
  return index;
}

/// Row-major digits of `linear` in `shape` (the first one not reduced
/// modulo its size: `linear` is below the shape's element count).
static SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                                      ArrayRef<int64_t> shape) {
  int64_t stride = 1;
  for (int64_t s : shape)
    stride *= s;
  SmallVector<Value> coords;
  for (auto [dim, size] : llvm::enumerate(shape)) {
    stride /= size;
    if (size == 1) {
      coords.push_back(constantIndex(b, loc, 0));
      continue;
    }
    Value c = stride == 1 ? linear
                          : arith::DivUIOp::create(
                                b, loc, linear, constantIndex(b, loc, stride))
                                .getResult();
    if (dim != 0)
      c = arith::RemUIOp::create(b, loc, c, constantIndex(b, loc, size));
    coords.push_back(c);
  }
  return coords;
}

SlotCoords mlir::tile::slotCoords(OpBuilder &b, Location loc, LayoutAttr layout,
                                  ArrayRef<int64_t> shape, Value threadId,
                                  int64_t slot) {
  Value linear = slotLinearIndex(b, loc, layout, threadId, slot);
  SlotCoords result;
  if (layout.getSliced().empty()) {
    result.coords = delinearize(b, loc, linear, shape);
    return result;
  }
  SmallVector<Value> parent = delinearize(b, loc, linear, layout.getShape());
  Value zero = constantIndex(b, loc, 0);
  for (int64_t dim : layout.getSliced()) {
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        parent[dim], zero);
    result.representative =
        result.representative
            ? arith::AndIOp::create(b, loc, result.representative, first)
            : first;
    parent[dim] = zero;
  }
  SmallVector<int64_t> canonical = layout.getCanonicalShape();
  if (ArrayRef<int64_t>(canonical) == shape) {
    result.coords = parent;
    return result;
  }
  // A reshaped reduction result: through the row-major index.
  result.coords =
      delinearize(b, loc, linearize(b, loc, parent, canonical), shape);
  return result;
}

/// The stride (elements) of dimension `dim` in the layout's shape.
static int64_t strideOf(LayoutAttr layout, int64_t dim) {
  ArrayRef<int64_t> shape = layout.getShape();
  int64_t stride = 1;
  for (int64_t d = dim + 1; d < static_cast<int64_t>(shape.size()); ++d)
    stride *= shape[d];
  return stride;
}

int64_t mlir::tile::canonicalSlot(LayoutAttr layout, int64_t slot) {
  const int64_t v = layout.getVector(), round = layout.getThreads() * v;
  ArrayRef<int64_t> shape = layout.getShape();
  for (int64_t dim : layout.getSliced()) {
    const int64_t stride = strideOf(layout, dim), n = shape[dim];
    // A sliced dimension whose stride is a multiple of a round (threads x
    // vector elements) is a static function of the slot's chunk: element d
    // of it is d * (stride / round) chunks after element 0.
    if (stride % round == 0) {
      const int64_t q = stride / round, chunk = slot / v;
      slot -= (chunk / q) % n * q * v;
      continue;
    }
    // One whose stride divides the vector has, in lane r = slot % V of a
    // chunk, the digit (r / stride) mod min(n, V / stride) of its
    // coordinate: linear = A + r with A a multiple of V, and A / stride
    // adds a multiple of V / stride, which n divides or which divides n.
    if (v % stride == 0 && (v % (stride * n) == 0 || (stride * n) % v == 0)) {
      const int64_t r = slot % v, span = std::min(n, v / stride);
      slot -= (r / stride) % span * stride;
    }
  }
  return slot;
}

bool mlir::tile::mayRepresent(LayoutAttr layout, int64_t slot) {
  // A slot of a representative has every sliced coordinate 0; canonicalSlot
  // moves a slot to the one with those it decides statically at 0 (the rest
  // are tested at run time).
  return canonicalSlot(layout, slot) == slot;
}

SmallVector<int64_t> mlir::tile::compactLanes(LayoutAttr layout) {
  SmallVector<int64_t> lanes;
  for (int64_t r = 0; r < layout.getVector(); ++r)
    if (mayRepresent(layout, r))
      lanes.push_back(r);
  return lanes;
}

LayoutAttr mlir::tile::compactLayout(LayoutAttr layout) {
  const int64_t v = layout.getVector(), threads = layout.getThreads();
  ArrayRef<int64_t> shape = layout.getShape();
  int64_t groups = 1;
  for (int64_t dim : layout.getSliced()) {
    if (v % (strideOf(layout, dim) * shape[dim]) != 0)
      return {};
    groups *= shape[dim];
  }
  if (v % groups != 0)
    return {};
  const int64_t w = v / groups;
  SmallVector<int64_t> lanes = compactLanes(layout);
  if (static_cast<int64_t>(lanes.size()) != w)
    return {};
  // Checked element by element (the tile's size, at compile time): chunk
  // q = c * threads + t keeps the fragment elements q * w to q * w + w - 1.
  const int64_t rounds = layout.getSlots() / v;
  for (int64_t q = 0; q < rounds * threads; ++q)
    for (auto [i, r] : llvm::enumerate(lanes))
      if (layout.getElement(q % threads, q / threads * v + r) !=
          q * w + static_cast<int64_t>(i))
        return {};
  SmallVector<int64_t> kept;
  for (auto [dim, size] : llvm::enumerate(shape))
    if (!layout.isSliced(dim))
      kept.push_back(size);
  if (kept.empty())
    return {};
  return LayoutAttr::get(layout.getContext(), kept, threads, w, {});
}

std::optional<SmallVector<int64_t>>
mlir::tile::registerPermutation(LayoutAttr from, LayoutAttr to) {
  if (!from || !to || from.getThreads() != to.getThreads() ||
      from.getNumElements() != to.getNumElements())
    return std::nullopt;
  const int64_t threads = to.getThreads();
  SmallVector<int64_t> source;
  for (int64_t slot = 0; slot < to.getSlots(); ++slot) {
    std::optional<int64_t> found;
    // Candidates by thread 0, then checked in every thread.
    const int64_t first = to.getElement(0, slot);
    for (int64_t s = 0; s < from.getSlots() && !found; ++s) {
      if (from.getElement(0, s) != first)
        continue;
      bool same = true;
      for (int64_t t = 1; t < threads && same; ++t)
        same = from.getElement(t, s) == to.getElement(t, slot);
      if (same)
        found = s;
    }
    if (!found)
      return std::nullopt;
    source.push_back(*found);
  }
  return source;
}
