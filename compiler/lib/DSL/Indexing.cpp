//===- Indexing.cpp - DSL run-time indexing along a fragment dimension ---===//
//
// take and put compare each element's coordinate along the dimension (an
// iota, which takes its users' layout) with the index. put is a select;
// take sums the one matching element, moved as integer bits so that every
// value (-0.0, NaN payloads) comes out unchanged. In a layout where each
// thread holds whole rows along the dimension, the sum never leaves the
// thread. load_at reads a tensor or shared tile at positions a fragment
// holds (tile.load_at), scalars among them splat to the fragments' shape;
// store_at and atomic_add_at write there (tile.store_at).
//
//===----------------------------------------------------------------------===//
#include "BuilderImpl.h"

#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

namespace tilejit::dsl {

namespace {

/// The checked operands of take / put: the shapes and the index as a
/// fragment (or scalar) of i32 comparable with the iota.
struct Indexed {
  std::vector<int64_t> shape, rowShape;
  Value index;
};

Indexed checkIndexed(KernelBuilder &k, KernelBuilder::Impl &impl,
                     const char *what, Value fragment, int dim, Value index,
                     const Loc &loc) {
  if (!fragment.valid() || !index.valid())
    impl.fail(loc, fmt::format("{}: the value is an empty dsl::Value", what));
  impl.checkOwn(fragment, loc, what);
  impl.checkOwn(index, loc, what);
  auto type = dyn_cast<RankedTensorType>(unwrap(fragment).getType());
  if (!type)
    impl.fail(loc, fmt::format("{}: the value has type {}; requires a "
                               "fragment",
                               what, typeName(unwrap(fragment).getType())));
  if (dim < 0 || dim >= type.getRank())
    impl.fail(loc, fmt::format("{}: dim {} is out of range for a fragment of "
                               "rank {}",
                               what, dim, type.getRank()));
  Indexed r;
  r.shape.assign(type.getShape().begin(), type.getShape().end());
  r.rowShape = r.shape;
  r.rowShape[dim] = 1;
  Type indexType = unwrap(index).getType();
  Type elt = getElementTypeOrSelf(indexType);
  if (!elt.isIntOrIndex() || elt.isInteger(1))
    impl.fail(loc, fmt::format("{}: the index has type {}; requires an "
                               "integer or index",
                               what, typeName(indexType)));
  if (auto indexTensor = dyn_cast<RankedTensorType>(indexType);
      indexTensor && indexTensor.getShape() != ArrayRef<int64_t>(r.rowShape))
    impl.fail(loc, fmt::format("{}: the index has shape [{}]; requires a "
                               "scalar or the shape [{}] (the fragment's "
                               "with dim {} of size 1)",
                               what, fmt::join(indexTensor.getShape(), ", "),
                               fmt::join(r.rowShape, ", "), dim));
  r.index = k.cast(index, DType::i32, loc);
  if (isa<RankedTensorType>(indexType))
    r.index = k.broadcast(r.index, r.shape, loc);
  return r;
}

} // namespace

Value KernelBuilder::take(Value fragment, int dim, Value index, Loc loc) {
  Indexed at = checkIndexed(*this, *impl_, "take", fragment, dim, index, loc);
  Value match = eq(iota(at.shape, dim, DType::i32, loc), at.index, loc);
  // Moved as bits in a 32- or 64-bit integer: narrower types widen exactly.
  const DType dtype = fragment.dtype();
  Value bits;
  DType carrier = DType::i32;
  switch (dtype) {
  case DType::f32:
    bits = bitcast(fragment, DType::i32, loc);
    break;
  case DType::f16:
  case DType::bf16:
  case DType::e4m3:
  case DType::e5m2:
    bits = bitcast(cast(fragment, DType::f32, loc), DType::i32, loc);
    break;
  case DType::f64:
    carrier = DType::i64;
    bits = bitcast(fragment, DType::i64, loc);
    break;
  case DType::i64:
  case DType::u64:
    carrier = dtype;
    bits = fragment;
    break;
  case DType::boolean:
    bits = select(fragment, constant(1, DType::i32, loc),
                  constant(0, DType::i32, loc), loc);
    break;
  default: // i8, u8, i32, u32
    bits = cast(fragment, DType::i32, loc);
    break;
  }
  Value sum =
      reduce_sum(select(match, bits, constant(0, carrier, loc), loc), dim, loc);
  switch (dtype) {
  case DType::f32:
  case DType::f64:
    return bitcast(sum, dtype, loc);
  case DType::f16:
  case DType::bf16:
  case DType::e4m3:
  case DType::e5m2:
    return cast(bitcast(sum, DType::f32, loc), dtype, loc);
  case DType::boolean:
    return ne(sum, constant(0, DType::i32, loc), loc);
  default:
    return cast(sum, dtype, loc);
  }
}

Value KernelBuilder::put(Value fragment, int dim, Value index, Value value,
                         Loc loc) {
  Indexed at = checkIndexed(*this, *impl_, "put", fragment, dim, index, loc);
  if (!value.valid())
    impl_->fail(loc, "put: the value is an empty dsl::Value");
  impl_->checkOwn(value, loc, "put");
  if (auto valueType = dyn_cast<RankedTensorType>(unwrap(value).getType())) {
    if (valueType.getShape() != ArrayRef<int64_t>(at.rowShape))
      impl_->fail(loc, fmt::format("put: the value has shape [{}]; requires a "
                                   "scalar or the shape [{}]",
                                   fmt::join(valueType.getShape(), ", "),
                                   fmt::join(at.rowShape, ", ")));
    value = broadcast(value, at.shape, loc);
  }
  Value match = eq(iota(at.shape, dim, DType::i32, loc), at.index, loc);
  return select(match, value, fragment, loc);
}

/// The positions of load_at / store_at: `rank` indices (one a dimension),
/// fragments of one shape or scalars (the same position for every element),
/// as i32 or i64 fragments of that shape.
static std::pair<std::vector<int64_t>, SmallVector<mlir::Value>>
positions(KernelBuilder &kb, KernelBuilder::Impl &impl, const char *what,
          const std::vector<Value> &indices, int64_t rank, const Loc &loc) {
  if (static_cast<int64_t>(indices.size()) != rank)
    impl.fail(loc, fmt::format("{}: {} indices for a tensor of rank {}; "
                               "requires one a dimension",
                               what, indices.size(), rank));
  // The fragments' shape: that of the first fragment among the indices.
  RankedTensorType shape;
  for (auto [d, index] : llvm::enumerate(indices)) {
    if (!index.valid())
      impl.fail(loc,
                fmt::format("{}: index {} is an empty dsl::Value", what, d));
    impl.checkOwn(index, loc, what);
    Type type = unwrap(index).getType();
    Type elt = getElementTypeOrSelf(type);
    if (!elt.isIntOrIndex() || elt.isInteger(1))
      impl.fail(loc, fmt::format("{}: index {} has type {}; requires "
                                 "integers",
                                 what, d, typeName(type)));
    auto fragment = mlir::dyn_cast<RankedTensorType>(type);
    if (!fragment)
      continue;
    if (!shape)
      shape = fragment;
    else if (fragment.getShape() != shape.getShape())
      impl.fail(loc, fmt::format("{}: index {} has shape [{}] and "
                                 "an index before it [{}]; requires one "
                                 "shape",
                                 what, d, fmt::join(fragment.getShape(), ", "),
                                 fmt::join(shape.getShape(), ", ")));
  }
  if (!shape)
    impl.fail(loc, fmt::format("{}: every index is a scalar; requires a "
                               "fragment among them{}",
                               what,
                               std::string_view(what) == "load_at"
                                   ? " (load_scalar reads one element)"
                                   : ""));
  const std::vector<int64_t> dims(shape.getShape().begin(),
                                  shape.getShape().end());
  SmallVector<mlir::Value> at;
  for (const Value &index : indices) {
    // i32 positions (i64 ones stay i64); a scalar repeated.
    Value v = index;
    if (unwrap(v).getType().isIndex())
      v = impl.wrap(arith::IndexCastOp::create(impl.builder, impl.loc(loc),
                                               impl.builder.getI64Type(),
                                               unwrap(v)),
                    DType::i64);
    const DType dtype = dtypeOf(getElementTypeOrSelf(unwrap(v).getType()));
    if (dtype != DType::i32 && dtype != DType::i64)
      v = kb.cast(v, DType::i32, loc);
    if (!mlir::isa<RankedTensorType>(unwrap(v).getType()))
      v = kb.add(kb.full(dims, 0, v.dtype(), loc), v, loc);
    at.push_back(unwrap(v));
  }
  return {dims, at};
}

static mlir::Value loadAt(KernelBuilder &kb, KernelBuilder::Impl &impl,
                          mlir::Value memory, const std::vector<Value> &indices,
                          const Loc &loc) {
  auto memref = mlir::cast<MemRefType>(memory.getType());
  auto [dims, at] =
      positions(kb, impl, "load_at", indices, memref.getRank(), loc);
  auto result = RankedTensorType::get(dims, memref.getElementType());
  return tile::LoadAtOp::create(impl.builder, impl.loc(loc), result, memory, at)
      .getResult();
}

Value KernelBuilder::load_at(const Tensor &src,
                             const std::vector<Value> &indices, Loc loc) {
  impl_->checkOwn(src, loc, "load_at");
  return impl_->wrap(loadAt(*this, *impl_, unwrap(src.raw()), indices, loc),
                     src.dtype());
}

Value KernelBuilder::load_at(Value shared, const std::vector<Value> &indices,
                             Loc loc) {
  mlir::Value tile = sharedTile(*impl_, shared, "load_at", loc);
  return impl_->wrap(loadAt(*this, *impl_, tile, indices, loc), shared.dtype());
}

/// store_at and atomic_add_at: `fragment` (or a scalar, repeated) at the
/// positions, where `mask` holds.
static void storeAt(KernelBuilder &kb, KernelBuilder::Impl &impl,
                    const char *what, Value fragment, mlir::Value memory,
                    DType dtype, const std::vector<Value> &indices, Value mask,
                    std::optional<tile::AtomicKind> combine, const Loc &loc) {
  auto memref = mlir::cast<MemRefType>(memory.getType());
  auto [dims, at] = positions(kb, impl, what, indices, memref.getRank(), loc);
  if (!fragment.valid())
    impl.fail(loc, fmt::format("{}: the value is an empty dsl::Value", what));
  impl.checkOwn(fragment, loc, what);
  if (fragment.dtype() != dtype)
    impl.fail(loc,
              fmt::format("{}: the value is {} and the memory holds {}; "
                          "requires one dtype (cast first)",
                          what, name_of(fragment.dtype()), name_of(dtype)));
  Value value = fragment;
  if (auto type = dyn_cast<RankedTensorType>(unwrap(value).getType())) {
    if (type.getShape() != ArrayRef<int64_t>(dims))
      impl.fail(loc, fmt::format("{}: the value has shape [{}] and the "
                                 "indices [{}]; requires one shape",
                                 what, fmt::join(type.getShape(), ", "),
                                 fmt::join(dims, ", ")));
  } else {
    value = kb.add(kb.full(dims, 0, dtype, loc), value, loc);
  }
  mlir::Value where;
  if (mask.valid()) {
    impl.checkOwn(mask, loc, what);
    auto type = dyn_cast<RankedTensorType>(unwrap(mask).getType());
    if (!type || !type.getElementType().isInteger(1) ||
        type.getShape() != ArrayRef<int64_t>(dims))
      impl.fail(loc, fmt::format("{}: the mask has type {}; requires a "
                                 "comparison's result of shape [{}]",
                                 what, typeName(unwrap(mask).getType()),
                                 fmt::join(dims, ", ")));
    where = unwrap(mask);
  }
  auto op = tile::StoreAtOp::create(impl.builder, impl.loc(loc), unwrap(value),
                                    memory, at, where, nullptr);
  if (combine)
    op.setCombine(*combine);
}

void KernelBuilder::store_at(Value fragment, const Tensor &dst,
                             const std::vector<Value> &indices, Value mask,
                             Loc loc) {
  impl_->checkOwn(dst, loc, "store_at");
  storeAt(*this, *impl_, "store_at", fragment, unwrap(dst.raw()), dst.dtype(),
          indices, mask, std::nullopt, loc);
}

void KernelBuilder::store_at(Value fragment, Value shared,
                             const std::vector<Value> &indices, Value mask,
                             Loc loc) {
  mlir::Value tile = sharedTile(*impl_, shared, "store_at", loc);
  storeAt(*this, *impl_, "store_at", fragment, tile, shared.dtype(), indices,
          mask, std::nullopt, loc);
}

void KernelBuilder::atomic_add_at(Value fragment, Value shared,
                                  const std::vector<Value> &indices, Value mask,
                                  Loc loc) {
  mlir::Value tile = sharedTile(*impl_, shared, "atomic_add_at", loc);
  const DType dtype = shared.dtype();
  if (dtype != DType::i32 && dtype != DType::u32 && dtype != DType::i64 &&
      dtype != DType::u64 && dtype != DType::f32)
    impl_->fail(loc, fmt::format("atomic_add_at: the tile holds {}; requires "
                                 "i32, u32, i64, u64 or f32",
                                 name_of(dtype)));
  storeAt(*this, *impl_, "atomic_add_at", fragment, tile, dtype, indices, mask,
          tile::AtomicKind::add, loc);
}

} // namespace tilejit::dsl
