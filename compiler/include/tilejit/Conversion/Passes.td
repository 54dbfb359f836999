//===- Passes.td - Conversions out of the tile dialect -------------------===//
#ifndef TILEJIT_CONVERSION_PASSES_TD
#define TILEJIT_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTileToGPU : Pass<"convert-tile-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Turn every tile kernel into a gpu.func whose threads each own a slice of every fragment.";
  let description = [{
    Each `func.func` carrying `tile.threads = T` becomes a `gpu.func` kernel in
    the module's `gpu.module @tilejit_kernels`, with `known_block_size = [T, 1, 1]`.
    Fragments (`tensor<...>`) become per-thread `vector<P x elt>` values with
    P = elements / T, in the blocked, thread-cyclic layout: element number
    `l` of the fragment (row-major) lives in thread `l mod T`, slot `l div T`,
    so consecutive threads touch consecutive elements (coalesced).
    `tile.load`/`tile.store` become bounds-checked scalar loads and stores,
    element-wise `arith` ops on fragments become the same ops on vectors.
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect", "::mlir::memref::MemRefDialect",
    "::mlir::arith::ArithDialect"
  ];
}

#endif // TILEJIT_CONVERSION_PASSES_TD
