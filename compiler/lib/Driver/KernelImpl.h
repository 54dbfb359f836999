//===- KernelImpl.h - What a tilejit::Kernel owns: a context and a module ===//
#ifndef TILEJIT_DRIVER_KERNELIMPL_H
#define TILEJIT_DRIVER_KERNELIMPL_H

#include "tilejit/compiler/kernel.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <memory>
#include <optional>

namespace tilejit {

struct Kernel::Impl {
  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::string name;
  int threads = 0;
  std::vector<KernelParam> params;
  std::optional<std::array<GridExtent, 3>> grid;
  bool programmatic = false; ///< tile.programmatic
};

/// A context with tilejit's dialects registered and loaded, single-threaded
/// (a compile is small; a thread pool per context costs more than it saves).
std::unique_ptr<mlir::MLIRContext> makeContext();

/// Builds a Kernel from a verified module holding one tile kernel; throws
/// UserError if there is none or more than one (then both stay with the
/// caller, which must destroy the module before the context).
Kernel makeKernel(std::unique_ptr<mlir::MLIRContext> &&context,
                  mlir::OwningOpRef<mlir::ModuleOp> &&module);

/// MLIR type of a tilejit dtype, and back (nullopt if the type has no dtype).
mlir::Type toMLIRType(mlir::MLIRContext *ctx, DType dtype);
std::optional<DType> fromMLIRType(mlir::Type type);

} // namespace tilejit

#endif // TILEJIT_DRIVER_KERNELIMPL_H
