//===- KernelBuilder.cpp - The C++ tile DSL: builder calls to tile IR ----===//
//
// Each builder call creates tile/arith ops at the location of the author's
// call (std::source_location), so verifier errors point at kernel code.
//
//===----------------------------------------------------------------------===//
#include "BuilderImpl.h"

#include "../Driver/Diagnostics.h"
#include "../Driver/KernelImpl.h"

#include "tilejit/Dialect/Tile/IR/Tile.h"
#include "tilejit/error.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"

#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <algorithm>

using namespace mlir;

namespace tilejit::dsl {

std::string typeName(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

DType dtypeOf(Type elementType) {
  if (elementType.isIndex())
    return DType::i64;
  if (elementType.isInteger(1))
    return DType::boolean;
  return fromMLIRType(elementType).value_or(DType::f32);
}

std::vector<int64_t> Value::shape() const {
  auto type = dyn_cast<RankedTensorType>(unwrap(*this).getType());
  if (!type)
    return {};
  return std::vector<int64_t>(type.getShape().begin(), type.getShape().end());
}

KernelBuilder::KernelBuilder(std::string_view name, int threads, Loc loc)
    : impl_(std::make_unique<Impl>(makeContext())) {
  impl_->self = this;
  if (!is_identifier(name))
    impl_->fail(loc, fmt::format("kernel name '{}' is not an identifier; "
                                 "requires an ASCII letter or '_', then "
                                 "letters, digits or '_'",
                                 name));
  if (threads < 32 || threads > 1024 || threads % 32 != 0)
    impl_->fail(loc, fmt::format("kernel '{}' has {} threads; requires a "
                                 "multiple of 32 from 32 to 1024",
                                 name, threads));
  Location l = impl_->loc(loc);
  impl_->module = ModuleOp::create(l);
  OpBuilder &b = impl_->builder;
  b.setInsertionPointToEnd(impl_->module->getBody());
  impl_->func = func::FuncOp::create(b, l, StringRef(name.data(), name.size()),
                                     b.getFunctionType({}, {}));
  impl_->func->setAttr(tile::TileDialect::getThreadsAttrName(),
                       b.getI32IntegerAttr(threads));
  b.setInsertionPointToStart(impl_->func.addEntryBlock());
}

KernelBuilder::~KernelBuilder() {
  if (impl_)
    impl_->module = nullptr; // before the context
}

/// A parameter name must be an identifier, and new.
static void checkParamName(KernelBuilder::Impl &impl, std::string_view what,
                           std::string_view name, const Loc &loc) {
  if (!is_identifier(name))
    impl.fail(loc, fmt::format("{} name '{}' is not an identifier; requires "
                               "an ASCII letter or '_', then letters, digits "
                               "or '_'",
                               what, name));
  if (std::find(impl.argNames.begin(), impl.argNames.end(), name) !=
      impl.argNames.end())
    impl.fail(loc, fmt::format("{} name '{}' is taken by another parameter "
                               "of this kernel",
                               what, name));
}

Tensor KernelBuilder::tensor(std::string_view name, DType dtype, int rank,
                             Access access, Loc loc) {
  checkParamName(*impl_, "tensor", name, loc);
  Location l = impl_->loc(loc);
  if (rank < 1 || rank > 6)
    impl_->fail(loc, fmt::format("tensor '{}' has rank {}; requires 1 to 6",
                                 name, rank));
  int align = access.align_bytes;
  if (align < 0 || (align & (align - 1)) != 0 || align > 256)
    impl_->fail(loc, fmt::format("tensor '{}': align_bytes is {}; requires 0 "
                                 "or a power of two up to 256",
                                 name, align));
  SmallVector<int64_t> dynamic(rank, ShapedType::kDynamic);
  SmallVector<int64_t> strides = dynamic;
  if (access.inner_contiguous)
    strides.back() = 1;
  auto layout = StridedLayoutAttr::get(impl_->context.get(),
                                       ShapedType::kDynamic, strides);
  auto type =
      MemRefType::get(dynamic, toMLIRType(impl_->context.get(), dtype), layout);
  BlockArgument arg = impl_->func.getBody().addArgument(type, l);
  impl_->argNames.emplace_back(name);
  impl_->argAlign.push_back(align);
  impl_->argRepeats.push_back(access.repeats);
  Tensor t;
  t.builder_ = this;
  t.value_ = mlir::Value(arg).getAsOpaquePointer();
  t.rank_ = rank;
  t.dtype_ = dtype;
  return t;
}

Value KernelBuilder::scalar(std::string_view name, DType dtype, Loc loc) {
  checkParamName(*impl_, "scalar", name, loc);
  Location l = impl_->loc(loc);
  BlockArgument arg = impl_->func.getBody().addArgument(
      toMLIRType(impl_->context.get(), dtype), l);
  impl_->argNames.emplace_back(name);
  impl_->argAlign.push_back(0);
  impl_->argRepeats.push_back(false);
  return impl_->wrap(arg, dtype);
}

Value KernelBuilder::block_id(int dim, Loc loc) {
  Location l = impl_->loc(loc);
  if (dim < 0 || dim > 2)
    impl_->fail(loc, fmt::format("block_id({}): requires a grid dimension "
                                 "0, 1 or 2",
                                 dim));
  mlir::Value v =
      tile::BlockIdOp::create(impl_->builder, l, impl_->builder.getIndexType(),
                              impl_->builder.getI32IntegerAttr(dim));
  return impl_->wrap(v, DType::i64);
}

Value KernelBuilder::index(int64_t value, Loc loc) {
  mlir::Value v =
      arith::ConstantIndexOp::create(impl_->builder, impl_->loc(loc), value);
  return impl_->wrap(v, DType::i64);
}

static SmallVector<mlir::Value> unwrapAll(const std::vector<Value> &values,
                                          KernelBuilder::Impl &impl,
                                          const Loc &loc) {
  SmallVector<mlir::Value> out;
  for (const Value &v : values) {
    if (!v.valid())
      impl.fail(loc, "an index of the tile origin is an empty dsl::Value");
    impl.checkOwn(v, loc, "tile origin");
    out.push_back(unwrap(v.raw()));
  }
  return out;
}

/// `values` as indices: an integer scalar (an index read from memory, or
/// computed from one) is cast, sign-extended, so that a negative one wraps
/// above every extent and is outside the tensor; `what` names the caller in
/// the error on anything else.
static SmallVector<mlir::Value> indicesOf(const std::vector<Value> &values,
                                          KernelBuilder::Impl &impl,
                                          const char *what, const Loc &loc) {
  SmallVector<mlir::Value> at = unwrapAll(values, impl, loc);
  OpBuilder &b = impl.builder;
  for (size_t i = 0; i < at.size(); ++i) {
    mlir::Value &v = at[i];
    if (v.getType().isSignlessInteger())
      v = arith::IndexCastOp::create(b, impl.loc(loc), b.getIndexType(), v);
    if (!mlir::isa<IndexType>(v.getType()))
      impl.fail(loc, fmt::format("{}: index {} is {}; requires an index or "
                                 "an integer scalar",
                                 what, i, typeName(v.getType())));
  }
  return at;
}

Value KernelBuilder::load(const Tensor &src, const std::vector<Value> &origin,
                          const std::vector<int64_t> &shape, Bounds bounds,
                          Loc loc) {
  impl_->checkOwn(src, loc, "load");
  Location l = impl_->loc(loc);
  auto memref = mlir::cast<MemRefType>(unwrap(src.raw()).getType());
  auto type = RankedTensorType::get(shape, memref.getElementType());
  auto op = tile::LoadOp::create(impl_->builder, l, type, unwrap(src.raw()),
                                 indicesOf(origin, *impl_, "load", loc));
  op.setInBounds(bounds == Bounds::promised_inside);
  return impl_->wrap(op.getResult(), src.dtype());
}

Value KernelBuilder::load_scalar(const Tensor &src,
                                 const std::vector<Value> &index, Loc loc) {
  impl_->checkOwn(src, loc, "load_scalar");
  if (static_cast<int>(index.size()) != src.rank())
    impl_->fail(loc, fmt::format("load_scalar: {} indices for a tensor of "
                                 "rank {}; requires one a dimension",
                                 index.size(), src.rank()));
  SmallVector<mlir::Value> at = indicesOf(index, *impl_, "load_scalar", loc);
  OpBuilder &b = impl_->builder;
  Location l = impl_->loc(loc);
  mlir::Value memref = unwrap(src.raw());
  Type elt = mlir::cast<MemRefType>(memref.getType()).getElementType();
  // Inside when every index is below its extent (unsigned: a negative one
  // is outside too).
  mlir::Value inside;
  for (auto [d, v] : llvm::enumerate(at)) {
    mlir::Value extent =
        memref::DimOp::create(b, l, memref, static_cast<int64_t>(d));
    mlir::Value in =
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, v, extent);
    inside = inside ? arith::AndIOp::create(b, l, inside, in).getResult() : in;
  }
  auto read = [&](OpBuilder &ob, Location ol) {
    scf::YieldOp::create(
        ob, ol, memref::LoadOp::create(ob, ol, memref, at).getResult());
  };
  mlir::Value value;
  if (!inside) { // rank 0
    value = memref::LoadOp::create(b, l, memref, at);
  } else {
    value =
        scf::IfOp::create(b, l, inside, read, [&](OpBuilder &ob, Location ol) {
          scf::YieldOp::create(
              ob, ol,
              arith::ConstantOp::create(ob, ol, elt, ob.getZeroAttr(elt))
                  .getResult());
        }).getResult(0);
  }
  return impl_->wrap(value, src.dtype());
}

/// Fails unless `rows` is a rank-1 tensor of i32 or i64 row indices.
static void checkRows(KernelBuilder::Impl &impl, const Tensor &rows,
                      const Tensor &tensor, const char *name, const Loc &loc) {
  auto index = mlir::cast<MemRefType>(unwrap(rows.raw()).getType());
  if (index.getRank() != 1 ||
      (rows.dtype() != DType::i32 && rows.dtype() != DType::i64))
    impl.fail(loc, fmt::format("{}: rows must be a rank-1 tensor of i32 or "
                               "i64 row indices, got {}",
                               name, typeName(index)));
  if (tensor.rank() < 2)
    impl.fail(loc, fmt::format("{}: the tensor has rank {}; requires rank 2 "
                               "or more (view a vector as (N, 1))",
                               name, tensor.rank()));
}

Value KernelBuilder::gather(const Tensor &src, const Tensor &rows,
                            const std::vector<Value> &origin,
                            const std::vector<int64_t> &shape, Bounds bounds,
                            Loc loc) {
  impl_->checkOwn(src, loc, "gather");
  impl_->checkOwn(rows, loc, "gather");
  checkRows(*impl_, rows, src, "gather", loc);
  Location l = impl_->loc(loc);
  auto memref = mlir::cast<MemRefType>(unwrap(src.raw()).getType());
  auto result = RankedTensorType::get(shape, memref.getElementType());
  auto op =
      tile::LoadOp::create(impl_->builder, l, result, unwrap(src.raw()),
                           unwrapAll(origin, *impl_, loc), unwrap(rows.raw()),
                           bounds == Bounds::promised_inside);
  return impl_->wrap(op.getResult(), src.dtype());
}

/// The fragment a store or scatter writes, or a named error.
static mlir::Value storedFragment(KernelBuilder::Impl &impl, Value fragment,
                                  const Tensor &dst, const char *name,
                                  const Loc &loc) {
  if (!fragment.valid())
    impl.fail(loc, fmt::format("{}: the value is an empty dsl::Value", name));
  impl.checkOwn(fragment, loc, name);
  impl.checkOwn(dst, loc, name);
  mlir::Value v = unwrap(fragment.raw());
  if (!isa<RankedTensorType>(v.getType()))
    impl.fail(loc, fmt::format("{}: the value has type {}; requires a "
                               "fragment (a tile from load or arithmetic "
                               "on one)",
                               name, typeName(v.getType())));
  return v;
}

void KernelBuilder::store(Value fragment, const Tensor &dst,
                          const std::vector<Value> &origin, Bounds bounds,
                          Loc loc) {
  mlir::Value v = storedFragment(*impl_, fragment, dst, "store", loc);
  auto op = tile::StoreOp::create(impl_->builder, impl_->loc(loc), v,
                                  unwrap(dst.raw()),
                                  indicesOf(origin, *impl_, "store", loc));
  op.setInBounds(bounds == Bounds::promised_inside);
}

void KernelBuilder::scatter(Value fragment, const Tensor &dst,
                            const Tensor &rows,
                            const std::vector<Value> &origin, Bounds bounds,
                            Loc loc) {
  mlir::Value v = storedFragment(*impl_, fragment, dst, "scatter", loc);
  impl_->checkOwn(rows, loc, "scatter");
  checkRows(*impl_, rows, dst, "scatter", loc);
  tile::StoreOp::create(impl_->builder, impl_->loc(loc), v, unwrap(dst.raw()),
                        unwrapAll(origin, *impl_, loc), unwrap(rows.raw()),
                        /*mask=*/mlir::Value(),
                        bounds == Bounds::promised_inside);
}

void KernelBuilder::store_where(Value mask, Value fragment, const Tensor &dst,
                                const std::vector<Value> &origin, Loc loc) {
  mlir::Value v = storedFragment(*impl_, fragment, dst, "store_where", loc);
  if (!mask.valid())
    impl_->fail(loc, "store_where: the mask is an empty dsl::Value");
  impl_->checkOwn(mask, loc, "store_where");
  mlir::Value m = unwrap(mask.raw());
  auto mt = mlir::dyn_cast<RankedTensorType>(m.getType());
  if (!mt || !mt.getElementType().isInteger(1) ||
      mt.getShape() != mlir::cast<RankedTensorType>(v.getType()).getShape())
    impl_->fail(loc, fmt::format("store_where: the mask has type {}; "
                                 "requires a comparison's i1 fragment of the "
                                 "value's shape {}",
                                 typeName(m.getType()), typeName(v.getType())));
  tile::StoreOp::create(impl_->builder, impl_->loc(loc), v, unwrap(dst.raw()),
                        unwrapAll(origin, *impl_, loc), /*rows=*/mlir::Value(),
                        m, /*in_bounds=*/false);
}

static void atomic(KernelBuilder::Impl &impl, tile::AtomicKind kind,
                   const char *name, Value fragment, const Tensor &dst,
                   const std::vector<Value> &origin, const Loc &loc) {
  impl.checkOwn(fragment, loc, name);
  impl.checkOwn(dst, loc, name);
  mlir::Value v = fragment.valid() ? unwrap(fragment.raw()) : mlir::Value();
  if (!v || !isa<RankedTensorType>(v.getType()))
    impl.fail(loc, fmt::format("{}: the value has type {}; requires a "
                               "fragment",
                               name, v ? typeName(v.getType()) : "none"));
  if (fragment.dtype() != dst.dtype())
    impl.fail(loc, fmt::format("{}: the value is {} and the tensor {}; "
                               "requires the same dtype",
                               name, name_of(fragment.dtype()),
                               name_of(dst.dtype())));
  DType d = fragment.dtype();
  if (d != DType::f32 && d != DType::f64 && d != DType::i32 &&
      d != DType::i64 && d != DType::u32 && d != DType::u64)
    impl.fail(loc, fmt::format("{}: dtype {} is not supported; requires f32, "
                               "f64, i32, i64, u32 or u64",
                               name, name_of(d)));
  if (kind == tile::AtomicKind::max && (d == DType::u32 || d == DType::u64))
    kind = tile::AtomicKind::umax;
  tile::AtomicOp::create(impl.builder, impl.loc(loc), kind, v,
                         unwrap(dst.raw()), unwrapAll(origin, impl, loc));
}

void KernelBuilder::atomic_add(Value fragment, const Tensor &dst,
                               const std::vector<Value> &origin, Loc loc) {
  atomic(*impl_, tile::AtomicKind::add, "atomic_add", fragment, dst, origin,
         loc);
}

void KernelBuilder::atomic_max(Value fragment, const Tensor &dst,
                               const std::vector<Value> &origin, Loc loc) {
  atomic(*impl_, tile::AtomicKind::max, "atomic_max", fragment, dst, origin,
         loc);
}

Value KernelBuilder::transpose(Value fragment, Loc loc) {
  Location l = impl_->loc(loc);
  if (!fragment.valid())
    impl_->fail(loc, "transpose: the value is an empty dsl::Value");
  impl_->checkOwn(fragment, loc, "transpose");
  mlir::Value v = unwrap(fragment.raw());
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.getRank() < 2)
    impl_->fail(loc, fmt::format("transpose: the value has type {}; requires "
                                 "a fragment of rank 2 or more",
                                 typeName(v.getType())));
  SmallVector<int64_t> shape(type.getShape());
  std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
  mlir::Value t = tile::TransposeOp::create(
      impl_->builder, l, RankedTensorType::get(shape, type.getElementType()),
      v);
  return impl_->wrap(t, fragment.dtype());
}

Kernel KernelBuilder::build(Loc loc) {
  Location l = impl_->loc(loc);
  OpBuilder &b = impl_->builder;
  func::FuncOp func = impl_->func;
  func::ReturnOp::create(b, l);
  func.setFunctionType(
      b.getFunctionType(func.getBody().getArgumentTypes(), {}));
  for (auto [i, name] : llvm::enumerate(impl_->argNames)) {
    func.setArgAttr(i, "tile.name", b.getStringAttr(name));
    if (impl_->argAlign[i] > 0)
      func.setArgAttr(i, tile::TileDialect::getAlignAttrName(),
                      b.getI64IntegerAttr(impl_->argAlign[i]));
    if (impl_->argRepeats[i])
      func.setArgAttr(i, tile::TileDialect::getRepeatsAttrName(),
                      b.getUnitAttr());
  }
  {
    DiagnosticCollector diags(impl_->context.get());
    if (failed(verify(*impl_->module)))
      throw UserError(diags.text());
  }
  return makeKernel(std::move(impl_->context), std::move(impl_->module));
}

} // namespace tilejit::dsl
