//===- Shapes.cpp - DSL reductions, reshapes and broadcasts --------------===//
#include "BuilderImpl.h"

#include "../Driver/KernelImpl.h"

#include "tilejit/Dialect/Tile/IR/Tile.h"

using namespace mlir;

namespace tilejit::dsl {

static RankedTensorType fragmentType(KernelBuilder::Impl &impl, const Value &v,
                                     const char *what, const Loc &loc) {
  if (!v.valid())
    impl.fail(loc, fmt::format("{}: the value is an empty dsl::Value", what));
  auto type = dyn_cast<RankedTensorType>(unwrap(v).getType());
  if (!type)
    impl.fail(loc, fmt::format("{}: the value has type {}; requires a "
                               "fragment",
                               what, typeName(unwrap(v).getType())));
  impl.checkOwn(v, loc, what);
  return type;
}

static Value reduce(KernelBuilder::Impl &impl, tile::ReduceKind kind,
                    Value fragment, int dim, const Loc &loc) {
  std::string what = fmt::format("reduce_{}", tile::stringifyReduceKind(kind));
  RankedTensorType type = fragmentType(impl, fragment, what.c_str(), loc);
  impl.checkOwn(fragment, loc, what);
  if (auto f = dyn_cast<FloatType>(type.getElementType());
      f && f.getWidth() == 8)
    impl.fail(loc, fmt::format("{}: a fragment of dtype {}: 8-bit floats are "
                               "for storage; cast it to f32 first",
                               what, name_of(fragment.dtype())));
  if (dim < 0 || dim >= type.getRank())
    impl.fail(loc, fmt::format("{}: dim {} is out of range for a fragment of "
                               "rank {}",
                               what, dim, type.getRank()));
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] = 1;
  Location l = impl.loc(loc);
  mlir::Value v = tile::ReduceOp::create(
      impl.builder, l, RankedTensorType::get(shape, type.getElementType()),
      kind, unwrap(fragment), static_cast<uint64_t>(dim));
  return impl.wrap(v, fragment.dtype());
}

Value KernelBuilder::cumsum(Value fragment, int dim, Loc loc) {
  RankedTensorType type = fragmentType(*impl_, fragment, "cumsum", loc);
  if (fragment.dtype() != DType::i32 && fragment.dtype() != DType::i64 &&
      fragment.dtype() != DType::f32)
    impl_->fail(loc, fmt::format("cumsum: a fragment of dtype {}; requires "
                                 "i32, i64 or f32",
                                 name_of(fragment.dtype())));
  if (dim < 0 || dim >= type.getRank())
    impl_->fail(loc, fmt::format("cumsum: dim {} is out of range for a "
                                 "fragment of rank {}",
                                 dim, type.getRank()));
  mlir::Value v = tile::ScanOp::create(
      impl_->builder, impl_->loc(loc),
      RankedTensorType::get(type.getShape(), type.getElementType()),
      unwrap(fragment), static_cast<uint64_t>(dim));
  return impl_->wrap(v, fragment.dtype());
}

Value KernelBuilder::reduce_sum(Value fragment, int dim, Loc loc) {
  return reduce(*impl_, tile::ReduceKind::sum, fragment, dim, loc);
}
Value KernelBuilder::reduce_max(Value fragment, int dim, Loc loc) {
  return reduce(*impl_, tile::ReduceKind::max, fragment, dim, loc);
}
Value KernelBuilder::reduce_min(Value fragment, int dim, Loc loc) {
  return reduce(*impl_, tile::ReduceKind::min, fragment, dim, loc);
}
Value KernelBuilder::reduce_absmax(Value fragment, int dim, Loc loc) {
  return reduce(*impl_, tile::ReduceKind::absmax, fragment, dim, loc);
}

Value KernelBuilder::iota(const std::vector<int64_t> &shape, int dim,
                          DType dtype, Loc loc) {
  if (dim < 0 || dim >= static_cast<int>(shape.size()))
    impl_->fail(loc, fmt::format("iota: dim {} is out of range for the shape "
                                 "[{}]",
                                 dim, fmt::join(shape, ", ")));
  Type elt = toMLIRType(impl_->context.get(), dtype);
  if (!elt.isSignlessInteger())
    impl_->fail(loc, fmt::format("iota: requires an integer dtype, got {}",
                                 name_of(dtype)));
  Location l = impl_->loc(loc);
  return impl_->wrap(tile::IotaOp::create(impl_->builder, l,
                                          RankedTensorType::get(shape, elt),
                                          static_cast<uint64_t>(dim)),
                     dtype);
}

Value KernelBuilder::reshape(Value fragment, const std::vector<int64_t> &shape,
                             Loc loc) {
  RankedTensorType type = fragmentType(*impl_, fragment, "reshape", loc);
  auto result = RankedTensorType::get(shape, type.getElementType());
  if (result.getNumElements() != type.getNumElements())
    impl_->fail(loc,
                fmt::format("reshape: {} has {} elements; the shape "
                            "[{}] has {}",
                            typeName(type), type.getNumElements(),
                            fmt::join(shape, ", "), result.getNumElements()));
  Location l = impl_->loc(loc);
  return impl_->wrap(
      tile::ReshapeOp::create(impl_->builder, l, result, unwrap(fragment)),
      fragment.dtype());
}

Value KernelBuilder::stack(const std::vector<Value> &parts, Loc loc) {
  if (parts.size() < 2)
    impl_->fail(loc, fmt::format("stack: requires at least 2 parts, got {}",
                                 parts.size()));
  RankedTensorType type = fragmentType(*impl_, parts.front(), "stack", loc);
  for (const Value &part : parts) {
    RankedTensorType t = fragmentType(*impl_, part, "stack", loc);
    if (t.getShape() != type.getShape() || part.dtype() != parts[0].dtype())
      impl_->fail(loc, fmt::format("stack: the parts must have one shape and "
                                   "dtype; got {} and {}",
                                   typeName(type), typeName(t)));
  }
  if (type.getRank() == 0 || type.getShape().back() != 1)
    impl_->fail(loc, fmt::format("stack: the parts must have a last "
                                 "dimension of size 1, got {}",
                                 typeName(type)));
  SmallVector<int64_t> shape(type.getShape());
  shape.back() = static_cast<int64_t>(parts.size());
  SmallVector<mlir::Value> operands;
  for (const Value &part : parts)
    operands.push_back(unwrap(part));
  Location l = impl_->loc(loc);
  return impl_->wrap(
      tile::StackOp::create(impl_->builder, l,
                            RankedTensorType::get(shape, type.getElementType()),
                            operands),
      parts.front().dtype());
}

std::vector<Value> KernelBuilder::unstack(Value fragment, Loc loc) {
  RankedTensorType type = fragmentType(*impl_, fragment, "unstack", loc);
  if (type.getRank() == 0 || type.getShape().back() < 2)
    impl_->fail(loc, fmt::format("unstack: the fragment must have a last "
                                 "dimension of size 2 or more, got {}",
                                 typeName(type)));
  SmallVector<int64_t> shape(type.getShape());
  const int64_t k = shape.back();
  shape.back() = 1;
  SmallVector<Type> types(k,
                          RankedTensorType::get(shape, type.getElementType()));
  Location l = impl_->loc(loc);
  auto op = tile::UnstackOp::create(impl_->builder, l, types, unwrap(fragment));
  std::vector<Value> parts;
  for (mlir::Value part : op.getParts())
    parts.push_back(impl_->wrap(part, fragment.dtype()));
  return parts;
}

Value KernelBuilder::relayout(Value fragment, int vector, Loc loc) {
  RankedTensorType type = fragmentType(*impl_, fragment, "relayout", loc);
  if (vector < 1 || (vector & (vector - 1)) != 0)
    impl_->fail(loc, fmt::format("relayout: vector {} must be a power of two "
                                 "(elements a thread holds together)",
                                 vector));
  Location l = impl_->loc(loc);
  auto op =
      tile::ConvertLayoutOp::create(impl_->builder, l, type, unwrap(fragment));
  op.setVector(static_cast<uint64_t>(vector));
  return impl_->wrap(op.getResult(), fragment.dtype());
}

/// What shuffle_xor and shuffle_idx check alike; the fragment's type.
static RankedTensorType shuffleType(KernelBuilder::Impl &impl, const Value &v,
                                    const char *what, int dim, const Loc &loc) {
  RankedTensorType type = fragmentType(impl, v, what, loc);
  if (dim < 0 || dim >= type.getRank())
    impl.fail(loc, fmt::format("{}: dim {} is out of range for a fragment of "
                               "rank {}",
                               what, dim, type.getRank()));
  if (size_of(v.dtype()) != 4)
    impl.fail(loc, fmt::format("{}: requires 32-bit elements, got {}; cast "
                               "to f32 or i32 first",
                               what, name_of(v.dtype())));
  return type;
}

Value KernelBuilder::shuffle_xor(Value fragment, int dim, int mask, Loc loc) {
  RankedTensorType type =
      shuffleType(*impl_, fragment, "shuffle_xor", dim, loc);
  if (mask <= 0 || mask >= 32 || mask >= type.getDimSize(dim))
    impl_->fail(
        loc, fmt::format("shuffle_xor: mask {} must be in 1..{} (lanes "
                         "of one warp, within dimension {} of size "
                         "{})",
                         mask, std::min<int64_t>(31, type.getDimSize(dim) - 1),
                         dim, type.getDimSize(dim)));
  Location l = impl_->loc(loc);
  return impl_->wrap(tile::ShuffleXorOp::create(impl_->builder, l, type,
                                                unwrap(fragment),
                                                static_cast<uint64_t>(dim),
                                                static_cast<uint64_t>(mask)),
                     fragment.dtype());
}

Value KernelBuilder::shuffle_idx(Value fragment, int dim, int lane, Loc loc) {
  RankedTensorType type =
      shuffleType(*impl_, fragment, "shuffle_idx", dim, loc);
  const int64_t segment = std::min<int64_t>(type.getDimSize(dim), 32);
  if (lane < 0 || lane >= segment)
    impl_->fail(loc, fmt::format("shuffle_idx: lane {} must be in 0..{} "
                                 "(groups of {} along dimension {} of size "
                                 "{})",
                                 lane, segment - 1, segment, dim,
                                 type.getDimSize(dim)));
  Location l = impl_->loc(loc);
  return impl_->wrap(tile::ShuffleIdxOp::create(impl_->builder, l, type,
                                                unwrap(fragment),
                                                static_cast<uint64_t>(dim),
                                                static_cast<uint64_t>(lane)),
                     fragment.dtype());
}

Value KernelBuilder::match_any(Value fragment, int dim, Loc loc) {
  RankedTensorType type = fragmentType(*impl_, fragment, "match_any", loc);
  if (dim < 0 || dim >= type.getRank())
    impl_->fail(loc, fmt::format("match_any: dim {} is out of range for a "
                                 "fragment of rank {}",
                                 dim, type.getRank()));
  const DType dtype = fragment.dtype();
  if (dtype != DType::i32 && dtype != DType::u32 && dtype != DType::i64 &&
      dtype != DType::u64)
    impl_->fail(loc, fmt::format("match_any: requires i32, u32, i64 or u64 "
                                 "elements, got {}",
                                 name_of(dtype)));
  Location l = impl_->loc(loc);
  auto result =
      RankedTensorType::get(type.getShape(), impl_->builder.getI32Type());
  return impl_->wrap(tile::MatchAnyOp::create(impl_->builder, l, result,
                                              unwrap(fragment),
                                              static_cast<uint64_t>(dim)),
                     DType::u32);
}

Value KernelBuilder::broadcast(Value fragment,
                               const std::vector<int64_t> &shape, Loc loc) {
  RankedTensorType type = fragmentType(*impl_, fragment, "broadcast", loc);
  auto result = RankedTensorType::get(shape, type.getElementType());
  bool ok = result.getRank() == type.getRank();
  for (int64_t d = 0; ok && d < type.getRank(); ++d)
    ok = type.getDimSize(d) == 1 || type.getDimSize(d) == shape[d];
  if (!ok)
    impl_->fail(loc, fmt::format("broadcast: {} cannot be broadcast to [{}]; "
                                 "each dimension must match or be 1",
                                 typeName(type), fmt::join(shape, ", ")));
  if (result == type)
    return fragment;
  Location l = impl_->loc(loc);
  return impl_->wrap(
      tile::BroadcastOp::create(impl_->builder, l, result, unwrap(fragment)),
      fragment.dtype());
}

} // namespace tilejit::dsl
