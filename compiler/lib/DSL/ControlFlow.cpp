//===- ControlFlow.cpp - DSL loops and branches ---------------------------===//
//
// serial -> scf.for with the carried values as iter_args; unroll -> the body
// called once per step while building; if_else -> scf.if with results.
// Fragments carried through them keep their layouts (tile-assign-layouts).
//
//===----------------------------------------------------------------------===//
#include "BuilderImpl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace tilejit::dsl {

/// `v` as an index scalar, or a UserError naming `what`.
static mlir::Value indexScalar(KernelBuilder::Impl &impl, const Value &v,
                               const char *what, const Loc &loc) {
  mlir::Value raw = v.valid() ? unwrap(v) : mlir::Value();
  if (raw && raw.getType().isIndex())
    return raw;
  if (raw && isa<IntegerType>(raw.getType()))
    return arith::IndexCastOp::create(impl.builder, impl.loc(loc),
                                      impl.builder.getIndexType(), raw);
  impl.fail(loc, fmt::format("{} has type {}; requires an index or integer "
                             "scalar",
                             what, raw ? typeName(raw.getType()) : "none"));
}

/// The MLIR values of `body`'s results, checked against `expected`.
static SmallVector<mlir::Value>
carriedResults(KernelBuilder::Impl &impl, const std::vector<Value> &results,
               TypeRange expected, const char *what, const Loc &loc) {
  if (results.size() != expected.size())
    impl.fail(loc, fmt::format("{} returned {} values; requires {}, one per "
                               "carried value",
                               what, results.size(), expected.size()));
  SmallVector<mlir::Value> values;
  for (auto [i, v] : llvm::enumerate(results)) {
    mlir::Value raw = v.valid() ? unwrap(v) : mlir::Value();
    if (!raw || raw.getType() != expected[i])
      impl.fail(loc,
                fmt::format("{} returned value {} of type {}; requires "
                            "{}, the type it carries",
                            what, i, raw ? typeName(raw.getType()) : "none",
                            typeName(expected[i])));
    values.push_back(raw);
  }
  return values;
}

static SmallVector<mlir::Value> unwrapAll(KernelBuilder::Impl &impl,
                                          const std::vector<Value> &values,
                                          const char *what, const Loc &loc) {
  SmallVector<mlir::Value> raw;
  for (auto [i, v] : llvm::enumerate(values)) {
    if (!v.valid())
      impl.fail(loc,
                fmt::format("{}: value {} is an empty dsl::Value", what, i));
    raw.push_back(unwrap(v));
  }
  return raw;
}

static std::vector<Value> wrapAll(KernelBuilder::Impl &impl, ValueRange raw,
                                  const std::vector<Value> &like) {
  std::vector<Value> values;
  for (auto [r, v] : llvm::zip(raw, like))
    values.push_back(impl.wrap(r, v.dtype()));
  return values;
}

std::vector<Value> KernelBuilder::serial(Value lo, Value hi,
                                         const std::vector<Value> &init,
                                         const Body &body, Loc loc) {
  Impl &impl = *impl_;
  mlir::Value from = indexScalar(impl, lo, "serial: lo", loc);
  mlir::Value to = indexScalar(impl, hi, "serial: hi", loc);
  SmallVector<mlir::Value> inits = unwrapAll(impl, init, "serial", loc);
  Location l = impl.loc(loc);
  OpBuilder &b = impl.builder;
  mlir::Value one = arith::ConstantIndexOp::create(b, l, 1);
  auto op = scf::ForOp::create(b, l, from, to, one, inits);
  {
    OpBuilder::InsertionGuard guard(b);
    Block *block = op.getBody();
    if (!block->empty() && block->back().hasTrait<OpTrait::IsTerminator>())
      block->back().erase();
    b.setInsertionPointToEnd(block);
    std::vector<Value> carried = wrapAll(impl, op.getRegionIterArgs(), init);
    std::vector<Value> next =
        body(impl.wrap(op.getInductionVar(), DType::i64), carried);
    scf::YieldOp::create(b, l,
                         carriedResults(impl, next, op.getResultTypes(),
                                        "serial: the body", loc));
  }
  return wrapAll(impl, op.getResults(), init);
}

std::vector<Value> KernelBuilder::unroll(int64_t lo, int64_t hi,
                                         const std::vector<Value> &init,
                                         const Body &body, Loc loc) {
  Impl &impl = *impl_;
  SmallVector<mlir::Value> carried = unwrapAll(impl, init, "unroll", loc);
  SmallVector<Type> types;
  for (mlir::Value v : carried)
    types.push_back(v.getType());
  std::vector<Value> values = init;
  for (int64_t i = lo; i < hi; ++i) {
    std::vector<Value> next = body(index(i, loc), values);
    carriedResults(impl, next, types, "unroll: the body", loc);
    values = next;
  }
  return values;
}

std::vector<Value> KernelBuilder::if_else(Value cond,
                                          const std::vector<Value> &values,
                                          const Body &then_, const Body &else_,
                                          Loc loc) {
  Impl &impl = *impl_;
  mlir::Value c = cond.valid() ? unwrap(cond) : mlir::Value();
  if (!c || !c.getType().isInteger(1))
    impl.fail(loc, fmt::format("if_else: the condition has type {}; requires "
                               "an i1 scalar (a comparison of scalars)",
                               c ? typeName(c.getType()) : "none"));
  unwrapAll(impl, values, "if_else", loc);
  Location l = impl.loc(loc);
  OpBuilder &b = impl.builder;
  // The result types are the then-branch's; the else-branch must return the
  // same. The branches are built into a result-less scf.if first and moved
  // into the final one: no branch (which may throw a UserError) runs inside
  // an MLIR builder callback, whose frames an exception would skip.
  auto draft = scf::IfOp::create(b, l, TypeRange{}, c, /*addThenBlock=*/true,
                                 /*addElseBlock=*/true);
  std::vector<Value> thenResults;
  SmallVector<Type> types;
  {
    OpBuilder::InsertionGuard guard(b);
    for (Block *block : {draft.thenBlock(), draft.elseBlock()})
      if (!block->empty() && block->back().hasTrait<OpTrait::IsTerminator>())
        block->back().erase();
    b.setInsertionPointToEnd(draft.thenBlock());
    thenResults = then_(index(0, loc), values);
    SmallVector<mlir::Value> raw =
        unwrapAll(impl, thenResults, "if_else: the then branch", loc);
    for (mlir::Value v : raw)
      types.push_back(v.getType());
    scf::YieldOp::create(b, l, raw);
    b.setInsertionPointToEnd(draft.elseBlock());
    std::vector<Value> results = else_(index(0, loc), values);
    scf::YieldOp::create(
        b, l,
        carriedResults(impl, results, types, "if_else: the else branch", loc));
  }
  auto op = scf::IfOp::create(b, l, types, c, /*addThenBlock=*/false,
                              /*addElseBlock=*/false);
  op.getThenRegion().takeBody(draft.getThenRegion());
  op.getElseRegion().takeBody(draft.getElseRegion());
  draft.erase();
  return wrapAll(impl, op.getResults(), thenResults);
}

void KernelBuilder::when(Value cond, const std::function<void()> &body,
                         Loc loc) {
  auto none = [](Value, std::vector<Value>) { return std::vector<Value>{}; };
  if_else(
      cond, {},
      [&](Value, std::vector<Value>) {
        body();
        return std::vector<Value>{};
      },
      none, loc);
}

} // namespace tilejit::dsl
