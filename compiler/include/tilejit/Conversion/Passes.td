//===- Passes.td - Conversions out of the tile dialect -------------------===//
#ifndef TILEJIT_CONVERSION_PASSES_TD
#define TILEJIT_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTileToGPU : Pass<"convert-tile-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Turn every tile kernel into a gpu.func whose threads each own a slice of every fragment.";
  let description = [{
    Each `func.func` carrying `tile.threads = T` becomes a `gpu.func` kernel in
    the module's `gpu.module @tilejit_kernels`, with `known_block_size = [T, 1, 1]`.
    Fragments, which must carry a `#tile.layout` (run `tile-assign-layouts`
    first), become per-thread `vector<P x elt>` values of their slots.
    `tile.load`/`tile.store` become bounds-checked vector (or scalar) loads
    and stores, element-wise `arith`/`math` ops on fragments the same ops
    on vectors, `tile.transpose` a round trip through padded shared memory,
    `tile.reduce` in-thread combining, warp shuffles and shared memory
    across warps.
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect", "::mlir::memref::MemRefDialect",
    "::mlir::arith::ArithDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::LLVM::LLVMDialect"
  ];
}

#endif // TILEJIT_CONVERSION_PASSES_TD
