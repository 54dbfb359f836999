//===- TileAttrs.cpp - The layout attribute and the reduction kinds ------===//
#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tile;

#include "tilejit/Dialect/Tile/IR/TileEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tilejit/Dialect/Tile/IR/TileAttrs.cpp.inc"

void TileDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tilejit/Dialect/Tile/IR/TileAttrs.cpp.inc"
      >();
}

static int64_t product(ArrayRef<int64_t> values) {
  int64_t p = 1;
  for (int64_t v : values)
    p *= v;
  return p;
}

LogicalResult LayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 ArrayRef<int64_t> shape, int64_t threads,
                                 int64_t vector, ArrayRef<int64_t> sliced) {
  if (shape.empty() || llvm::any_of(shape, [](int64_t d) { return d <= 0; }))
    return emitError() << "layout shape must be non-empty with positive sizes";
  if (threads <= 0 || vector <= 0)
    return emitError() << "layout threads and vector must be positive";
  if (product(shape) % (threads * vector) != 0)
    return emitError() << "layout shape of " << product(shape)
                       << " elements does not split into vectors of " << vector
                       << " over " << threads << " threads";
  for (auto [i, dim] : llvm::enumerate(sliced))
    if (dim < 0 || dim >= static_cast<int64_t>(shape.size()) ||
        (i > 0 && sliced[i - 1] >= dim))
      return emitError() << "layout sliced dimensions must be increasing "
                            "dimensions of the shape";
  return success();
}

int64_t LayoutAttr::getSlots() const {
  return product(getShape()) / getThreads();
}

bool LayoutAttr::isSliced(int64_t dim) const {
  return llvm::is_contained(getSliced(), dim);
}

SmallVector<int64_t> LayoutAttr::getCanonicalShape() const {
  SmallVector<int64_t> shape(getShape());
  for (int64_t dim : getSliced())
    shape[dim] = 1;
  return shape;
}

int64_t LayoutAttr::getNumElements() const {
  return product(getCanonicalShape());
}

int64_t LayoutAttr::getElement(int64_t thread, int64_t slot) const {
  const int64_t v = getVector(), t = getThreads();
  const int64_t linear = ((slot / v) * t + thread) * v + slot % v;
  if (getSliced().empty())
    return linear;
  ArrayRef<int64_t> shape = getShape();
  SmallVector<int64_t> canonical = getCanonicalShape();
  int64_t stride = getSlots() * t, index = 0;
  for (auto [dim, size] : llvm::enumerate(shape)) {
    stride /= size;
    const int64_t digit = linear / stride % size;
    index = index * canonical[dim] + (isSliced(dim) ? 0 : digit);
  }
  return index;
}

LayoutAttr LayoutAttr::slice(int64_t dim) const {
  SmallVector<int64_t> sliced(getSliced());
  if (!isSliced(dim)) {
    sliced.push_back(dim);
    llvm::sort(sliced);
  }
  return LayoutAttr::get(getContext(), getShape(), getThreads(), getVector(),
                         sliced);
}

LayoutAttr LayoutAttr::unslice(ArrayRef<int64_t> dims) const {
  SmallVector<int64_t> sliced;
  for (int64_t d : getSliced())
    if (!llvm::is_contained(dims, d))
      sliced.push_back(d);
  return LayoutAttr::get(getContext(), getShape(), getThreads(), getVector(),
                         sliced);
}
