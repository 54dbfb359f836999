//===- BuilderImpl.h - The state behind dsl::KernelBuilder ---------------===//
//
// Shared by the files of the DSL: the kernel's module and function, the
// builder, and helpers that wrap and unwrap dsl::Values.
//
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_DSL_BUILDERIMPL_H
#define TILEJIT_DSL_BUILDERIMPL_H

#include "tilejit/compiler/dsl.h"
#include "tilejit/error.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

namespace tilejit::dsl {

struct KernelBuilder::Impl {
  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp func;
  mlir::OpBuilder builder;
  std::vector<std::string> argNames;
  std::vector<int> argAlign;    ///< per argument; 0 for scalars
  std::vector<bool> argRepeats; ///< per argument: Access::repeats
  Loc last; ///< location of the latest builder call, for operators
  KernelBuilder *self = nullptr;

  explicit Impl(std::unique_ptr<mlir::MLIRContext> ctx)
      : context(std::move(ctx)), builder(context.get()) {}

  /// The MLIR location of an author's call (also remembered for operators).
  mlir::Location loc(const Loc &l) {
    last = l;
    return mlir::FileLineColLoc::get(context.get(), l.file_name(), l.line(),
                                     l.column());
  }

  [[noreturn]] void fail(const Loc &l, std::string_view message) {
    throw UserError(fmt::format("{}:{}:{}: error: {}", l.file_name(), l.line(),
                                l.column(), message));
  }

  /// A value used in this kernel must come from this kernel's builder (a
  /// value of another lives in another MLIRContext).
  void checkOwn(const Value &v, const Loc &l, std::string_view verb) {
    if (v.valid() && v.builder() != self)
      fail(l, fmt::format("{}: a value comes from another kernel's builder; "
                          "a dsl::Value is used only in the kernel that made "
                          "it",
                          verb));
  }

  /// The same for a tensor: a parameter of this kernel.
  void checkOwn(const Tensor &t, const Loc &l, std::string_view verb) {
    if (t.builder() != self)
      fail(l, fmt::format("{}: the tensor is a parameter of another kernel "
                          "(or of none); a dsl::Tensor is used only in the "
                          "kernel that declared it",
                          verb));
  }

  Value wrap(mlir::Value v, DType dtype) {
    return Value(self, v.getAsOpaquePointer(), dtype);
  }
};

inline mlir::Value unwrap(const Value &v) {
  return mlir::Value::getFromOpaquePointer(v.raw());
}

inline mlir::Value unwrap(void *v) {
  return mlir::Value::getFromOpaquePointer(v);
}

/// `type` with the element type `elt` (a tensor stays a tensor).
inline mlir::Type withElementType(mlir::Type type, mlir::Type elt) {
  if (auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(type))
    return mlir::RankedTensorType::get(tensor.getShape(), elt);
  return elt;
}

std::string typeName(mlir::Type type);

/// The DType a value of this MLIR element type has, by default signed.
DType dtypeOf(mlir::Type elementType);

/// The memref of a shared tile from alloc_shared; a named error for any
/// other value (`what`: the DSL call).
mlir::Value sharedTile(KernelBuilder::Impl &impl, const Value &shared,
                       const char *what, const Loc &loc);

} // namespace tilejit::dsl

#endif // TILEJIT_DSL_BUILDERIMPL_H
