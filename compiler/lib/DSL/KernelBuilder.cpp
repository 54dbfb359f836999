//===- KernelBuilder.cpp - The C++ tile DSL: builder calls to tile IR ----===//
//
// Each builder call creates tile/arith ops at the location of the author's
// call (std::source_location), so verifier errors point at kernel code.
//
//===----------------------------------------------------------------------===//
#include "tilejit/compiler/dsl.h"

#include "../Driver/Diagnostics.h"
#include "../Driver/KernelImpl.h"

#include "tilejit/Dialect/Tile/IR/Tile.h"
#include "tilejit/error.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"

#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

using namespace mlir;

namespace tilejit::dsl {

struct KernelBuilder::Impl {
  std::unique_ptr<MLIRContext> context;
  OwningOpRef<ModuleOp> module;
  func::FuncOp func;
  OpBuilder builder;
  std::vector<std::string> argNames;
  std::vector<int> argAlign; ///< per argument; 0 for scalars
  Loc last; ///< location of the latest builder call, for operators

  explicit Impl(std::unique_ptr<MLIRContext> ctx)
      : context(std::move(ctx)), builder(context.get()) {}

  Location loc(const Loc &l) {
    last = l;
    return FileLineColLoc::get(context.get(), l.file_name(), l.line(),
                               l.column());
  }

  [[noreturn]] void fail(const Loc &l, std::string_view message) {
    throw UserError(fmt::format("{}:{}:{}: error: {}", l.file_name(), l.line(),
                                l.column(), message));
  }
};

static mlir::Value unwrap(void *v) {
  return mlir::Value::getFromOpaquePointer(v);
}

static std::string typeName(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

KernelBuilder::KernelBuilder(std::string_view name, int threads, Loc loc)
    : impl_(std::make_unique<Impl>(makeContext())) {
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

Tensor KernelBuilder::tensor(std::string_view name, DType dtype, int rank,
                             Access access, Loc loc) {
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
  Tensor t;
  t.builder_ = this;
  t.value_ = mlir::Value(arg).getAsOpaquePointer();
  t.rank_ = rank;
  t.dtype_ = dtype;
  return t;
}

Value KernelBuilder::scalar(std::string_view name, DType dtype, Loc loc) {
  Location l = impl_->loc(loc);
  BlockArgument arg = impl_->func.getBody().addArgument(
      toMLIRType(impl_->context.get(), dtype), l);
  impl_->argNames.emplace_back(name);
  impl_->argAlign.push_back(0);
  return Value(this, mlir::Value(arg).getAsOpaquePointer());
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
  return Value(this, v.getAsOpaquePointer());
}

Value KernelBuilder::index(int64_t value, Loc loc) {
  mlir::Value v =
      arith::ConstantIndexOp::create(impl_->builder, impl_->loc(loc), value);
  return Value(this, v.getAsOpaquePointer());
}

static SmallVector<mlir::Value> unwrapAll(const std::vector<Value> &values,
                                          KernelBuilder::Impl &impl,
                                          const Loc &loc) {
  SmallVector<mlir::Value> out;
  for (const Value &v : values) {
    if (!v.valid())
      impl.fail(loc, "an index of the tile origin is an empty dsl::Value");
    out.push_back(unwrap(v.raw()));
  }
  return out;
}

Value KernelBuilder::load(const Tensor &src, const std::vector<Value> &origin,
                          const std::vector<int64_t> &shape, Loc loc) {
  Location l = impl_->loc(loc);
  auto memref = cast<MemRefType>(unwrap(src.raw()).getType());
  auto type = RankedTensorType::get(shape, memref.getElementType());
  mlir::Value v =
      tile::LoadOp::create(impl_->builder, l, type, unwrap(src.raw()),
                           unwrapAll(origin, *impl_, loc));
  return Value(this, v.getAsOpaquePointer());
}

void KernelBuilder::store(Value fragment, const Tensor &dst,
                          const std::vector<Value> &origin, Loc loc) {
  Location l = impl_->loc(loc);
  mlir::Value v = unwrap(fragment.raw());
  if (!isa<RankedTensorType>(v.getType()))
    impl_->fail(loc, fmt::format("store: the value has type {}; requires a "
                                 "fragment (a tile from load or arithmetic "
                                 "on one)",
                                 typeName(v.getType())));
  tile::StoreOp::create(impl_->builder, l, v, unwrap(dst.raw()),
                        unwrapAll(origin, *impl_, loc));
}

Value KernelBuilder::transpose(Value fragment, Loc loc) {
  Location l = impl_->loc(loc);
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
  return Value(this, t.getAsOpaquePointer());
}

namespace {
enum class Arith { add, sub, mul };
}

/// Builds `a op b`, broadcasting a scalar to the other side's fragment shape.
static mlir::Value binary(KernelBuilder::Impl &impl, Arith kind, Value a,
                          Value b, const Loc &loc) {
  static constexpr const char *verbs[] = {"add", "subtract", "multiply"};
  if (!a.valid() || !b.valid())
    impl.fail(loc, fmt::format("cannot {} an empty dsl::Value",
                               verbs[static_cast<int>(kind)]));
  Location l = impl.loc(loc);
  OpBuilder &ob = impl.builder;
  mlir::Value lhs = unwrap(a.raw()), rhs = unwrap(b.raw());
  auto lt = dyn_cast<RankedTensorType>(lhs.getType());
  auto rt = dyn_cast<RankedTensorType>(rhs.getType());
  if (lt && !rt && rhs.getType() == lt.getElementType())
    rhs = tile::SplatOp::create(ob, l, lt, rhs);
  else if (rt && !lt && lhs.getType() == rt.getElementType())
    lhs = tile::SplatOp::create(ob, l, rt, lhs);
  if (lhs.getType() != rhs.getType())
    impl.fail(loc,
              fmt::format("cannot {} values of types {} and {}",
                          verbs[static_cast<int>(kind)],
                          typeName(lhs.getType()), typeName(rhs.getType())));
  bool isFloat = isa<FloatType>(getElementTypeOrSelf(lhs.getType()));
  // Like nvcc's default (-fmad=true): a multiply feeding an add may become
  // one fused multiply-add (specs/moe_engram_mhc.md §0.2).
  auto contract = arith::FastMathFlags::contract;
  switch (kind) {
  case Arith::add:
    return isFloat
               ? arith::AddFOp::create(ob, l, lhs, rhs, contract).getResult()
               : arith::AddIOp::create(ob, l, lhs, rhs).getResult();
  case Arith::sub:
    return isFloat
               ? arith::SubFOp::create(ob, l, lhs, rhs, contract).getResult()
               : arith::SubIOp::create(ob, l, lhs, rhs).getResult();
  case Arith::mul:
    return isFloat
               ? arith::MulFOp::create(ob, l, lhs, rhs, contract).getResult()
               : arith::MulIOp::create(ob, l, lhs, rhs).getResult();
  }
  return {};
}

Value KernelBuilder::add(Value a, Value b, Loc loc) {
  return Value(this,
               binary(*impl_, Arith::add, a, b, loc).getAsOpaquePointer());
}
Value KernelBuilder::sub(Value a, Value b, Loc loc) {
  return Value(this,
               binary(*impl_, Arith::sub, a, b, loc).getAsOpaquePointer());
}
Value KernelBuilder::mul(Value a, Value b, Loc loc) {
  return Value(this,
               binary(*impl_, Arith::mul, a, b, loc).getAsOpaquePointer());
}

// Operators cannot take a source_location; they use the latest builder call's.
static KernelBuilder &builderOf(Value a, Value b) {
  KernelBuilder *k = a.valid() ? a.builder() : b.builder();
  if (!k)
    throw UserError("dsl: arithmetic on two empty dsl::Values");
  return *k;
}
Value operator+(Value a, Value b) {
  KernelBuilder &k = builderOf(a, b);
  return k.add(a, b, k.impl_->last);
}
Value operator-(Value a, Value b) {
  KernelBuilder &k = builderOf(a, b);
  return k.sub(a, b, k.impl_->last);
}
Value operator*(Value a, Value b) {
  KernelBuilder &k = builderOf(a, b);
  return k.mul(a, b, k.impl_->last);
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
  }
  {
    DiagnosticCollector diags(impl_->context.get());
    if (failed(verify(*impl_->module)))
      throw UserError(diags.text());
  }
  return makeKernel(std::move(impl_->context), std::move(impl_->module));
}

} // namespace tilejit::dsl
