//===- Arithmetic.cpp - DSL element-wise math, comparisons and casts -----===//
//
// Every op here works on scalars and fragments alike: arith and math ops on
// tensors are element-wise, and the tile passes give them layouts. Binary
// ops broadcast a scalar to the other side's fragment and fragments along
// their dimensions of size 1.
//
//===----------------------------------------------------------------------===//
#include "BuilderImpl.h"

#include "../Driver/KernelImpl.h"

#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace tilejit::dsl {

namespace {

enum class Binary {
  add,
  sub,
  mul,
  div,
  rem,
  max,
  min,
  bit_and,
  bit_or,
  bit_xor,
  shl,
  shr,
  lt,
  le,
  gt,
  ge,
  eq,
  ne
};

constexpr const char *kVerbs[] = {"add",
                                  "subtract",
                                  "multiply",
                                  "divide",
                                  "take the remainder of",
                                  "take the max of",
                                  "take the min of",
                                  "and",
                                  "or",
                                  "xor",
                                  "shift",
                                  "shift",
                                  "compare",
                                  "compare",
                                  "compare",
                                  "compare",
                                  "compare",
                                  "compare"};

bool isUnsigned(DType t) {
  return t == DType::u8 || t == DType::u32 || t == DType::u64 ||
         t == DType::boolean;
}

bool isFloatDType(DType t) {
  return t == DType::f32 || t == DType::f16 || t == DType::bf16 ||
         t == DType::e4m3 || t == DType::e5m2 || t == DType::f64;
}

} // namespace

/// The dtype of a value as messages name it ("index" for indices).
static std::string dtypeName(const Value &v) {
  if (getElementTypeOrSelf(unwrap(v).getType()).isIndex())
    return "index";
  return std::string(name_of(v.dtype()));
}

/// `lhs` and `rhs` splatted or broadcast (along dimensions of size 1) to
/// their joint shape, each keeping its element type.
static std::pair<mlir::Value, mlir::Value>
broadcastPair(KernelBuilder::Impl &impl, const char *verb, mlir::Value lhs,
              mlir::Value rhs, const Loc &loc) {
  Location l = impl.loc(loc);
  OpBuilder &ob = impl.builder;
  auto lt = dyn_cast<RankedTensorType>(lhs.getType());
  auto rt = dyn_cast<RankedTensorType>(rhs.getType());
  auto to = [](ArrayRef<int64_t> shape, mlir::Value v) {
    return RankedTensorType::get(shape, getElementTypeOrSelf(v.getType()));
  };
  if (lt && !rt)
    return {lhs, tile::SplatOp::create(ob, l, to(lt.getShape(), rhs), rhs)};
  if (rt && !lt)
    return {tile::SplatOp::create(ob, l, to(rt.getShape(), lhs), lhs), rhs};
  if (!lt || lt.getShape() == rt.getShape())
    return {lhs, rhs};
  if (lt.getRank() != rt.getRank())
    impl.fail(loc, fmt::format("cannot {} fragments of types {} and {}: "
                               "ranks differ",
                               verb, typeName(lt), typeName(rt)));
  SmallVector<int64_t> shape;
  for (auto [x, y] : llvm::zip(lt.getShape(), rt.getShape())) {
    if (x != y && x != 1 && y != 1)
      impl.fail(loc, fmt::format("cannot {} fragments of types {} and {}: "
                                 "each dimension must match or be 1",
                                 verb, typeName(lt), typeName(rt)));
    shape.push_back(std::max(x, y));
  }
  if (lt.getShape() != ArrayRef<int64_t>(shape))
    lhs = tile::BroadcastOp::create(ob, l, to(shape, lhs), lhs);
  if (rt.getShape() != ArrayRef<int64_t>(shape))
    rhs = tile::BroadcastOp::create(ob, l, to(shape, rhs), rhs);
  return {lhs, rhs};
}

/// `a` and `b` brought to one type: a scalar splatted to the other's
/// fragment, fragments broadcast along their dimensions of size 1.
static std::pair<mlir::Value, mlir::Value> unify(KernelBuilder::Impl &impl,
                                                 const char *verb, Value a,
                                                 Value b, const Loc &loc) {
  if (!a.valid() || !b.valid())
    impl.fail(loc, fmt::format("cannot {} an empty dsl::Value", verb));
  impl.checkOwn(a, loc, verb);
  impl.checkOwn(b, loc, verb);
  mlir::Value lhs = unwrap(a), rhs = unwrap(b);
  Type le = getElementTypeOrSelf(lhs.getType());
  Type re = getElementTypeOrSelf(rhs.getType());
  if (le != re ||
      (isUnsigned(a.dtype()) != isUnsigned(b.dtype()) && !le.isIndex()))
    impl.fail(loc, fmt::format("cannot {} values of dtypes {} and {}; cast "
                               "one of them first",
                               verb, dtypeName(a), dtypeName(b)));
  // fp8 is a storage format: the GPU has no arithmetic on it (the lowering
  // would leave it unconverted).
  if (isa<FloatType>(le) && cast<FloatType>(le).getWidth() == 8)
    impl.fail(loc, fmt::format("cannot {} values of dtype {}: 8-bit floats "
                               "are for storage; cast them to f32 first",
                               verb, dtypeName(a)));
  return broadcastPair(impl, verb, lhs, rhs, loc);
}

static Value binary(KernelBuilder::Impl &impl, Binary kind, Value a, Value b,
                    const Loc &loc) {
  const char *verb = kVerbs[static_cast<int>(kind)];
  auto [lhs, rhs] = unify(impl, verb, a, b, loc);
  Location l = impl.loc(loc);
  OpBuilder &ob = impl.builder;
  Type elt = getElementTypeOrSelf(lhs.getType());
  bool isFloat = isa<FloatType>(elt);
  bool isUns = isUnsigned(a.dtype());
  if (isFloat && kind == Binary::rem)
    impl.fail(loc, fmt::format("cannot take the remainder of values of dtype "
                               "{}; rem is of integers (C's %)",
                               name_of(a.dtype())));
  if (isFloat &&
      (kind == Binary::bit_and || kind == Binary::bit_or ||
       kind == Binary::bit_xor || kind == Binary::shl || kind == Binary::shr))
    impl.fail(loc, fmt::format("cannot {} values of dtype {}; bitcast to an "
                               "integer dtype first",
                               verb, name_of(a.dtype())));
  // Like nvcc's default (-fmad=true): a multiply feeding an add may become
  // one fused multiply-add (specs/moe_engram_mhc.md §0.2).
  auto contract = arith::FastMathFlags::contract;
  auto cmp = [&](arith::CmpFPredicate f, arith::CmpIPredicate s,
                 arith::CmpIPredicate u) -> Value {
    mlir::Value v =
        isFloat
            ? arith::CmpFOp::create(ob, l, f, lhs, rhs).getResult()
            : arith::CmpIOp::create(ob, l, isUns ? u : s, lhs, rhs).getResult();
    return impl.wrap(v, DType::boolean);
  };
  using F = arith::CmpFPredicate;
  using I = arith::CmpIPredicate;
  mlir::Value v;
  switch (kind) {
  case Binary::add:
    v = isFloat ? arith::AddFOp::create(ob, l, lhs, rhs, contract).getResult()
                : arith::AddIOp::create(ob, l, lhs, rhs).getResult();
    break;
  case Binary::sub:
    v = isFloat ? arith::SubFOp::create(ob, l, lhs, rhs, contract).getResult()
                : arith::SubIOp::create(ob, l, lhs, rhs).getResult();
    break;
  case Binary::mul:
    v = isFloat ? arith::MulFOp::create(ob, l, lhs, rhs, contract).getResult()
                : arith::MulIOp::create(ob, l, lhs, rhs).getResult();
    break;
  case Binary::div:
    v = isFloat ? arith::DivFOp::create(ob, l, lhs, rhs).getResult()
        : isUns ? arith::DivUIOp::create(ob, l, lhs, rhs).getResult()
                : arith::DivSIOp::create(ob, l, lhs, rhs).getResult();
    break;
  case Binary::rem:
    v = isUns ? arith::RemUIOp::create(ob, l, lhs, rhs).getResult()
              : arith::RemSIOp::create(ob, l, lhs, rhs).getResult();
    break;
  case Binary::max:
    v = isFloat ? arith::MaxNumFOp::create(ob, l, lhs, rhs).getResult()
        : isUns ? arith::MaxUIOp::create(ob, l, lhs, rhs).getResult()
                : arith::MaxSIOp::create(ob, l, lhs, rhs).getResult();
    break;
  case Binary::min:
    v = isFloat ? arith::MinNumFOp::create(ob, l, lhs, rhs).getResult()
        : isUns ? arith::MinUIOp::create(ob, l, lhs, rhs).getResult()
                : arith::MinSIOp::create(ob, l, lhs, rhs).getResult();
    break;
  case Binary::bit_and:
    v = arith::AndIOp::create(ob, l, lhs, rhs);
    break;
  case Binary::bit_or:
    v = arith::OrIOp::create(ob, l, lhs, rhs);
    break;
  case Binary::bit_xor:
    v = arith::XOrIOp::create(ob, l, lhs, rhs);
    break;
  case Binary::shl:
    v = arith::ShLIOp::create(ob, l, lhs, rhs);
    break;
  case Binary::shr:
    v = isUns ? arith::ShRUIOp::create(ob, l, lhs, rhs).getResult()
              : arith::ShRSIOp::create(ob, l, lhs, rhs).getResult();
    break;
  case Binary::lt:
    return cmp(F::OLT, I::slt, I::ult);
  case Binary::le:
    return cmp(F::OLE, I::sle, I::ule);
  case Binary::gt:
    return cmp(F::OGT, I::sgt, I::ugt);
  case Binary::ge:
    return cmp(F::OGE, I::sge, I::uge);
  case Binary::eq:
    return cmp(F::OEQ, I::eq, I::eq);
  case Binary::ne:
    return cmp(F::UNE, I::ne, I::ne);
  }
  return impl.wrap(v, a.dtype());
}

#define TILEJIT_DSL_BINARY(name)                                               \
  Value KernelBuilder::name(Value a, Value b, Loc loc) {                       \
    return binary(*impl_, Binary::name, a, b, loc);                            \
  }
TILEJIT_DSL_BINARY(add)
TILEJIT_DSL_BINARY(sub)
TILEJIT_DSL_BINARY(mul)
TILEJIT_DSL_BINARY(div)
TILEJIT_DSL_BINARY(rem)
TILEJIT_DSL_BINARY(max)
TILEJIT_DSL_BINARY(min)
TILEJIT_DSL_BINARY(bit_and)
TILEJIT_DSL_BINARY(bit_or)
TILEJIT_DSL_BINARY(bit_xor)
TILEJIT_DSL_BINARY(shl)
TILEJIT_DSL_BINARY(shr)
TILEJIT_DSL_BINARY(lt)
TILEJIT_DSL_BINARY(le)
TILEJIT_DSL_BINARY(gt)
TILEJIT_DSL_BINARY(ge)
TILEJIT_DSL_BINARY(eq)
TILEJIT_DSL_BINARY(ne)
#undef TILEJIT_DSL_BINARY

Value KernelBuilder::constant(double value, DType dtype, Loc loc) {
  Location l = impl_->loc(loc);
  Type type = toMLIRType(impl_->context.get(), dtype);
  OpBuilder &b = impl_->builder;
  TypedAttr attr =
      isa<FloatType>(type)
          ? TypedAttr(b.getFloatAttr(type, value))
          : TypedAttr(b.getIntegerAttr(
                type, isUnsigned(dtype)
                          ? static_cast<int64_t>(static_cast<uint64_t>(value))
                          : static_cast<int64_t>(value)));
  return impl_->wrap(arith::ConstantOp::create(b, l, attr), dtype);
}

Value KernelBuilder::abs(Value a, Loc loc) {
  Location l = impl_->loc(loc);
  if (!a.valid())
    impl_->fail(loc, "cannot take abs of an empty dsl::Value");
  impl_->checkOwn(a, loc, "abs");
  mlir::Value v = unwrap(a);
  if (isa<FloatType>(getElementTypeOrSelf(v.getType())))
    return impl_->wrap(math::AbsFOp::create(impl_->builder, l, v), a.dtype());
  return impl_->wrap(math::AbsIOp::create(impl_->builder, l, v), a.dtype());
}

Value KernelBuilder::popcount(Value a, Loc loc) {
  if (!a.valid() ||
      !isa<IntegerType>(getElementTypeOrSelf(unwrap(a).getType())) ||
      getElementTypeOrSelf(unwrap(a).getType()).isInteger(1))
    impl_->fail(loc, fmt::format("popcount: requires integers, got {}",
                                 a.valid() ? typeName(unwrap(a).getType())
                                           : "an empty value"));
  impl_->checkOwn(a, loc, "popcount");
  return impl_->wrap(
      math::CtPopOp::create(impl_->builder, impl_->loc(loc), unwrap(a)),
      a.dtype());
}

/// An f32 math op of one operand.
template <typename OpTy>
static Value unaryF32(KernelBuilder::Impl &impl, const char *name, Value a,
                      const Loc &loc) {
  if (!a.valid() || a.dtype() != DType::f32)
    impl.fail(loc, fmt::format("{}: requires an f32 value, got {}", name,
                               a.valid() ? dtypeName(a) : "an empty value"));
  impl.checkOwn(a, loc, name);
  Location l = impl.loc(loc);
  return impl.wrap(OpTy::create(impl.builder, l, unwrap(a)), a.dtype());
}

Value KernelBuilder::exp(Value a, Loc loc) {
  return unaryF32<math::ExpOp>(*impl_, "exp", a, loc);
}

Value KernelBuilder::sqrt(Value a, Loc loc) {
  return unaryF32<math::SqrtOp>(*impl_, "sqrt", a, loc);
}

Value KernelBuilder::rsqrt(Value a, Loc loc) {
  return unaryF32<math::RsqrtOp>(*impl_, "rsqrt", a, loc);
}

Value KernelBuilder::fma(Value a, Value b, Value c, Loc loc) {
  if (!a.valid() || !b.valid() || !c.valid() || a.dtype() != DType::f32 ||
      b.dtype() != DType::f32 || c.dtype() != DType::f32)
    impl_->fail(loc, "fma: requires three f32 values");
  for (const Value &v : {a, b, c})
    impl_->checkOwn(v, loc, "fma");
  // Bring all three to one shape: (a, b), then (a*b's shape, c).
  auto [x, y] = unify(*impl_, "fma", a, b, loc);
  Value xy = impl_->wrap(x, DType::f32);
  auto [p, z] = unify(*impl_, "fma", xy, c, loc);
  if (p.getType() != y.getType()) { // c widened the shape: widen b too
    auto [p2, y2] = unify(*impl_, "fma", impl_->wrap(p, DType::f32),
                          impl_->wrap(y, DType::f32), loc);
    p = p2;
    y = y2;
  }
  Location l = impl_->loc(loc);
  return impl_->wrap(math::FmaOp::create(impl_->builder, l, p, y, z),
                     DType::f32);
}

Value KernelBuilder::sigmoid(Value a, Loc loc) {
  Value one = constant(1.0, DType::f32, loc);
  Value e = exp(sub(constant(0.0, DType::f32, loc), a, loc), loc);
  return div(one, add(one, e, loc), loc);
}

Value KernelBuilder::log(Value a, Loc loc) {
  return unaryF32<math::LogOp>(*impl_, "log", a, loc);
}

Value KernelBuilder::log1p(Value a, Loc loc) {
  return unaryF32<math::Log1pOp>(*impl_, "log1p", a, loc);
}

Value KernelBuilder::softplus(Value a, Loc loc) {
  Value threshold = constant(20.0, DType::f32, loc);
  return select(gt(a, threshold, loc), a, log1p(exp(a, loc), loc), loc);
}

Value KernelBuilder::select(Value cond, Value a, Value b, Loc loc) {
  if (!cond.valid() || cond.dtype() != DType::boolean)
    impl_->fail(loc, "select: the condition must be a comparison's result");
  auto [lhs, rhs] = unify(*impl_, "select between", a, b, loc);
  Location l = impl_->loc(loc);
  // The condition and the values broadcast together, as numpy's where.
  auto [c, joint] =
      broadcastPair(*impl_, "select with", unwrap(cond), lhs, loc);
  std::tie(lhs, rhs) = broadcastPair(*impl_, "select with", joint, rhs, loc);
  return impl_->wrap(arith::SelectOp::create(impl_->builder, l, c, lhs, rhs),
                     a.dtype());
}

Value KernelBuilder::cast(Value a, DType to, Loc loc) {
  Location l = impl_->loc(loc);
  if (!a.valid())
    impl_->fail(loc, "cannot cast an empty dsl::Value");
  impl_->checkOwn(a, loc, "cast");
  OpBuilder &b = impl_->builder;
  mlir::Value v = unwrap(a);
  Type from = getElementTypeOrSelf(v.getType());
  Type target = toMLIRType(impl_->context.get(), to);
  Type result = withElementType(v.getType(), target);
  DType src = a.dtype();
  if (from == target && isUnsigned(src) == isUnsigned(to))
    return a;
  auto f32 = b.getF32Type();
  if ((src == DType::e4m3 || src == DType::e5m2) && !isFloatDType(to))
    // fp8 -> integer: through f32 (exact), then toward zero.
    return cast(cast(a, DType::f32, loc), to, loc);
  if ((to == DType::e4m3 || to == DType::e5m2) && !isFloatDType(src))
    // integer -> fp8: through f32 (every integer past 2^24 saturates in
    // fp8 anyway, so one rounding). Found by the DSL fuzzer.
    return cast(cast(a, DType::f32, loc), to, loc);
  if (isFloatDType(src) && isFloatDType(to)) {
    unsigned fw = from.getIntOrFloatBitWidth(),
             tw = target.getIntOrFloatBitWidth();
    if (fw < tw)
      return impl_->wrap(arith::ExtFOp::create(b, l, result, v), to);
    if (fw == tw) // bf16 <-> f16: through f32 (exact, then rounded)
      v = arith::ExtFOp::create(b, l, withElementType(v.getType(), f32), v);
    return impl_->wrap(arith::TruncFOp::create(b, l, result, v), to);
  }
  if (isFloatDType(src)) // to an integer: toward zero
    return impl_->wrap(
        isUnsigned(to) ? arith::FPToUIOp::create(b, l, result, v).getResult()
                       : arith::FPToSIOp::create(b, l, result, v).getResult(),
        to);
  if (from.isIndex() && isFloatDType(to)) // index -> i64 -> float
    v = arith::IndexCastOp::create(
        b, l, withElementType(v.getType(), b.getI64Type()), v);
  else if (from.isIndex() || target.isIndex())
    return impl_->wrap(arith::IndexCastOp::create(b, l, result, v), to);
  if (isFloatDType(to))
    return impl_->wrap(
        isUnsigned(src) ? arith::UIToFPOp::create(b, l, result, v).getResult()
                        : arith::SIToFPOp::create(b, l, result, v).getResult(),
        to);
  unsigned fw = from.getIntOrFloatBitWidth(),
           tw = target.getIntOrFloatBitWidth();
  if (fw == tw)
    return impl_->wrap(v, to);
  if (fw > tw)
    return impl_->wrap(arith::TruncIOp::create(b, l, result, v), to);
  return impl_->wrap(isUnsigned(src)
                         ? arith::ExtUIOp::create(b, l, result, v).getResult()
                         : arith::ExtSIOp::create(b, l, result, v).getResult(),
                     to);
}

Value KernelBuilder::bitcast(Value a, DType to, Loc loc) {
  Location l = impl_->loc(loc);
  if (!a.valid())
    impl_->fail(loc, "cannot bitcast an empty dsl::Value");
  impl_->checkOwn(a, loc, "bitcast");
  mlir::Value v = unwrap(a);
  Type from = getElementTypeOrSelf(v.getType());
  Type target = toMLIRType(impl_->context.get(), to);
  if (from.getIntOrFloatBitWidth() != target.getIntOrFloatBitWidth())
    impl_->fail(loc, fmt::format("bitcast from {} to {}: the sizes differ",
                                 name_of(a.dtype()), name_of(to)));
  if (from == target)
    return impl_->wrap(v, to);
  return impl_->wrap(
      arith::BitcastOp::create(impl_->builder, l,
                               withElementType(v.getType(), target), v),
      to);
}

// Operators cannot take a source_location; they use the latest builder call's.
static KernelBuilder &builderOf(Value a, Value b) {
  KernelBuilder *k = a.valid() ? a.builder() : b.builder();
  if (!k)
    throw UserError("dsl: arithmetic on two empty dsl::Values");
  return *k;
}

#define TILEJIT_DSL_OPERATOR(op, name)                                         \
  Value operator op(Value a, Value b) {                                        \
    KernelBuilder &k = builderOf(a, b);                                        \
    return k.name(a, b, k.impl().last);                                        \
  }
TILEJIT_DSL_OPERATOR(+, add)
TILEJIT_DSL_OPERATOR(-, sub)
TILEJIT_DSL_OPERATOR(*, mul)
TILEJIT_DSL_OPERATOR(/, div)
TILEJIT_DSL_OPERATOR(%, rem)
TILEJIT_DSL_OPERATOR(&, bit_and)
TILEJIT_DSL_OPERATOR(|, bit_or)
TILEJIT_DSL_OPERATOR(^, bit_xor)
TILEJIT_DSL_OPERATOR(<<, shl)
TILEJIT_DSL_OPERATOR(>>, shr)
#undef TILEJIT_DSL_OPERATOR

} // namespace tilejit::dsl
