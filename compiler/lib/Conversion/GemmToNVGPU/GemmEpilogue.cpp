//===- GemmEpilogue.cpp - A gemm's epilogue, matched and on scalars ------===//
//
// See GemmEpilogue.h. The match walks the users of the loop's accumulator
// to its store; the evaluation clones each element-wise op with scalar
// types, the leaves as constants, kernel parameters or guarded loads (zero
// outside the vector, as tile.load reads).
//
//===----------------------------------------------------------------------===//
#include "GemmEpilogue.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <fmt/format.h>

using namespace mlir;
using namespace mlir::tile;

namespace {

InFlightDiagnostic fail(Operation *op, const Twine &what) {
  return op->emitOpError() << "cannot lower to TMA + WGMMA: " << what;
}

/// The name of a float the epilogue reads (bf16, f16, f32), else "".
std::string dtypeName(Type t) {
  std::string name = gemmTypeName(t);
  return name == "bf16" || name == "f16" || name == "f32" ? name : "";
}

/// The leaf `v` is, or failure (reported at `user`).
FailureOr<EpilogueLeaf> matchLeaf(func::FuncOp kernel, Value v, Value m0,
                                  Value n0, Operation *user) {
  Block *top = &kernel.getBody().front();
  auto kernelArg = [&](Value x) {
    auto arg = dyn_cast<BlockArgument>(x);
    return arg && arg.getOwner() == top ? arg : BlockArgument();
  };
  EpilogueLeaf leaf{EpilogueLeaf::Kind::constant, v, {}, {}, {}};
  if (auto c = v.getDefiningOp<arith::ConstantOp>()) {
    auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
    if (dense && dense.isSplat()) {
      leaf.constant = dense.getSplatValue<TypedAttr>();
      return leaf;
    }
  }
  if (auto splat = v.getDefiningOp<SplatOp>()) {
    if (auto c = splat.getValue().getDefiningOp<arith::ConstantOp>()) {
      leaf.constant = cast<TypedAttr>(c.getValue());
      return leaf;
    }
    if (BlockArgument arg = kernelArg(splat.getValue());
        arg && !dtypeName(arg.getType()).empty()) {
      leaf.kind = EpilogueLeaf::Kind::scalar;
      leaf.arg = arg;
      return leaf;
    }
  }
  if (auto broadcast = v.getDefiningOp<BroadcastOp>()) {
    auto load = broadcast.getSource().getDefiningOp<LoadOp>();
    RankedTensorType type = broadcast.getSource().getType();
    auto result = cast<RankedTensorType>(v.getType());
    if (load && !load.getRows() && kernelArg(load.getSource()) &&
        load.getIndices().size() == 2 &&
        !dtypeName(type.getElementType()).empty()) {
      leaf.arg = kernelArg(load.getSource());
      if (type.getDimSize(1) == 1 &&
          type.getDimSize(0) == result.getDimSize(0) &&
          load.getIndices()[0] == m0) {
        leaf.kind = EpilogueLeaf::Kind::rowVector;
        leaf.index = load.getIndices()[1];
        return leaf;
      }
      if (type.getDimSize(0) == 1 &&
          type.getDimSize(1) == result.getDimSize(1) &&
          load.getIndices()[1] == n0) {
        leaf.kind = EpilogueLeaf::Kind::colVector;
        leaf.index = load.getIndices()[0];
        return leaf;
      }
    }
  }
  fail(user, "its epilogue may read only the accumulator, constants, the "
             "kernel's float scalars and float vectors loaded at the tile's "
             "origin and broadcast (a [128, 1] load at [m0, j], a [1, BN] "
             "load at [i, n0])");
  return failure();
}

} // namespace

FailureOr<GemmEpilogueMatch> mlir::tile::matchGemmEpilogue(func::FuncOp kernel,
                                                           Value result,
                                                           Value m0, Value n0) {
  GemmEpilogueMatch m;
  m.result = result;
  Block *top = &kernel.getBody().front();
  auto shape = cast<RankedTensorType>(result.getType()).getShape();
  llvm::SetVector<Value> values;
  values.insert(result);
  for (size_t i = 0; i < values.size(); ++i) {
    for (Operation *user : values[i].getUsers()) {
      if (auto store = dyn_cast<StoreOp>(user)) {
        if (m.store && m.store != store) {
          StoreOp later = store->isBeforeInBlock(m.store) ? m.store : store;
          fail(later, "its accumulator must be stored once");
          return failure();
        }
        m.store = store;
        continue;
      }
      auto type = user->getNumResults() == 1
                      ? dyn_cast<RankedTensorType>(user->getResult(0).getType())
                      : RankedTensorType();
      if (user->getBlock() != top ||
          !isa<arith::ArithDialect>(user->getDialect()) ||
          !user->hasTrait<OpTrait::Elementwise>() || !type ||
          type.getShape() != shape) {
        fail(user, "its epilogue may hold only element-wise arith ops on "
                   "the accumulator's shape, then one store");
        return failure();
      }
      if (m.all.insert(user).second) {
        m.ops.push_back(user);
        values.insert(user->getResult(0));
      }
    }
  }
  if (!m.store) {
    fail(result.getDefiningOp(), "its result must be stored");
    return failure();
  }
  if (m.store.getIndices().size() != 2 || m.store.getIndices()[0] != m0 ||
      m.store.getIndices()[1] != n0 || m.store.getRows() || m.store.getMask()) {
    fail(m.store, "the accumulator must be stored at [m0, n0], the origins "
                  "of the a and b tiles");
    return failure();
  }
  llvm::sort(m.ops,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Operation *op : m.ops)
    for (Value operand : op->getOperands()) {
      if (values.contains(operand) ||
          llvm::any_of(m.leaves, [&](const EpilogueLeaf &l) {
            return l.value == operand;
          }))
        continue;
      FailureOr<EpilogueLeaf> leaf = matchLeaf(kernel, operand, m0, n0, op);
      if (failed(leaf))
        return failure();
      m.leaves.push_back(*leaf);
      for (Operation *def = operand.getDefiningOp(); def;) {
        m.all.insert(def);
        // A broadcast's load, a splat's constant.
        Value source = def->getNumOperands() > 0 ? def->getOperand(0) : Value();
        def = isa<BroadcastOp, SplatOp>(def) && source ? source.getDefiningOp()
                                                       : nullptr;
        if (def && !isa<LoadOp, arith::ConstantOp>(def))
          def = nullptr;
      }
    }
  return m;
}

bool GemmEpilogueMatch::isPlain() const {
  return leaves.empty() &&
         (ops.empty() ||
          (ops.size() == 1 && isa<arith::TruncFOp>(ops.front()) &&
           ops.front()->getOperand(0) == result));
}

SmallVector<Type> GemmEpilogueMatch::params(MLIRContext *ctx, unsigned first) {
  SmallVector<Type> types;
  Type i64 = IntegerType::get(ctx, 64);
  for (EpilogueLeaf &leaf : leaves) {
    leaf.firstParam = first + types.size();
    if (leaf.kind == EpilogueLeaf::Kind::scalar) {
      types.push_back(leaf.arg.getType());
    } else if (leaf.kind != EpilogueLeaf::Kind::constant) {
      // Address, rows, columns, row stride.
      types.append({LLVM::LLVMPointerType::get(ctx, 1), i64, i64, i64});
    }
  }
  return types;
}

SmallVector<std::string>
GemmEpilogueMatch::abiLines(func::FuncOp kernel) const {
  SmallVector<std::string> lines;
  for (const EpilogueLeaf &leaf : leaves) {
    if (leaf.kind == EpilogueLeaf::Kind::constant)
      continue;
    auto nameAttr = kernel.getArgAttrOfType<StringAttr>(leaf.arg.getArgNumber(),
                                                        "tile.name");
    const std::string name = nameAttr ? nameAttr.str() : "?";
    if (leaf.kind == EpilogueLeaf::Kind::scalar) {
      lines.push_back(fmt::format("arg scalar {} {} 0", name,
                                  dtypeName(leaf.arg.getType())));
      continue;
    }
    const std::string dtype =
        dtypeName(cast<MemRefType>(leaf.arg.getType()).getElementType());
    lines.push_back(fmt::format("arg pointer {} {} 2", name, dtype));
    lines.push_back(fmt::format("arg size {} {} 2 0", name, dtype));
    lines.push_back(fmt::format("arg size {} {} 2 1", name, dtype));
    lines.push_back(fmt::format("arg row_stride {} {} 2", name, dtype));
  }
  return lines;
}

GemmEpilogueFn mlir::tile::makeGemmEpilogue(
    const GemmEpilogueMatch &m, const LLVM::LLVMFuncOp &func,
    const llvm::DenseMap<Value, Value> &clonedIndices) {
  // Each vector element read once a thread: (leaf, row or column) -> value.
  using Memo = llvm::DenseMap<std::pair<unsigned, Value>, Value>;
  return [&m, &func, &clonedIndices,
          memo = Memo()](OpBuilder &b, Location loc, Value acc, Value row,
                         Value col) mutable -> Value {
    LLVM::LLVMFuncOp kernel = func;
    auto args = kernel.getBody().front().getArguments();
    auto toI64 = [&](Value v) -> Value {
      return arith::IndexCastOp::create(b, loc, b.getI64Type(), v);
    };
    // v[i, j] of a vector, zero outside it.
    auto read = [&](const EpilogueLeaf &leaf, Value i, Value j) -> Value {
      Type elt = cast<MemRefType>(leaf.arg.getType()).getElementType();
      Value ptr = args[leaf.firstParam], rows = args[leaf.firstParam + 1],
            cols = args[leaf.firstParam + 2],
            stride = args[leaf.firstParam + 3];
      Value i64 = toI64(i), j64 = toI64(j);
      Value inside = arith::AndIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, i64, rows),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, j64, cols));
      auto ifOp = scf::IfOp::create(
          b, loc, inside,
          [&](OpBuilder &tb, Location l) {
            Value offset = arith::AddIOp::create(
                tb, l, arith::MulIOp::create(tb, l, i64, stride), j64);
            Value at = LLVM::GEPOp::create(tb, l, ptr.getType(), elt, ptr,
                                           ValueRange{offset});
            scf::YieldOp::create(
                tb, l,
                LLVM::LoadOp::create(tb, l, elt, at,
                                     elt.getIntOrFloatBitWidth() / 8)
                    .getResult());
          },
          [&](OpBuilder &eb, Location l) {
            scf::YieldOp::create(
                eb, l,
                arith::ConstantOp::create(eb, l, eb.getZeroAttr(elt))
                    .getResult());
          });
      return ifOp.getResult(0);
    };
    llvm::DenseMap<Value, Value> scalar;
    scalar[m.result] = acc;
    for (auto [n, leaf] : llvm::enumerate(m.leaves)) {
      switch (leaf.kind) {
      case EpilogueLeaf::Kind::constant:
        scalar[leaf.value] = arith::ConstantOp::create(b, loc, leaf.constant);
        break;
      case EpilogueLeaf::Kind::scalar:
        scalar[leaf.value] = args[leaf.firstParam];
        break;
      case EpilogueLeaf::Kind::rowVector:
      case EpilogueLeaf::Kind::colVector: {
        const bool perRow = leaf.kind == EpilogueLeaf::Kind::rowVector;
        Value &v = memo[{static_cast<unsigned>(n), perRow ? row : col}];
        if (!v)
          v = perRow ? read(leaf, row, clonedIndices.lookup(leaf.index))
                     : read(leaf, clonedIndices.lookup(leaf.index), col);
        scalar[leaf.value] = v;
        break;
      }
      }
    }
    for (Operation *op : m.ops) {
      OperationState state(loc, op->getName());
      for (Value operand : op->getOperands())
        state.addOperands(scalar.lookup(operand));
      state.addTypes(getElementTypeOrSelf(op->getResult(0).getType()));
      state.addAttributes(op->getAttrs());
      scalar[op->getResult(0)] = b.create(state)->getResult(0);
    }
    StoreOp store = m.store;
    return scalar.lookup(store.getValue());
  };
}
