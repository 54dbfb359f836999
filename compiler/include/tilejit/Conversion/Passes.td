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
    across warps, and a `tile.gemm` outside a pipelined loop warp-level
    `mma.sync` (bf16, f16, tf32) on its shared tiles, whose rows are padded
    by 16 bytes, with the accumulator through a shared buffer.
    `tile.copy` becomes each thread's `cp.async` pieces of the box (up to
    16 bytes, zeros outside the tensor), then, unless it is `async` (in a
    loop from tile-lower-pipelined), the group's wait and a barrier.
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect", "::mlir::memref::MemRefDialect",
    "::mlir::arith::ArithDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::nvgpu::NVGPUDialect", "::mlir::LLVM::LLVMDialect"
  ];
}

def ConvertGemmToNVGPU : Pass<"convert-tile-gemm-to-nvgpu", "::mlir::ModuleOp"> {
  let summary = "Turn a kernel whose main loop is a pipelined TMA copy + gemm into a warp-specialised TMA + WGMMA kernel.";
  let description = [{
    Matches a 384-thread tile kernel whose pipelined loop holds a gemm, of
    the form

    ```
    m0, n0 = index arithmetic on block ids and constants
    acc = tile.pipelined count, zeros {stages = S} (step, acc) {
      tile.copy a[m0, step * BK], sa      // sa: 128 x BK shared tile
      tile.copy b[n0, step * BK], sb      // sb: BN x BK shared tile
      tile.yield tile.gemm sa, sb, acc
    }
    epilogue: element-wise arith ops and casts on acc, with constants,
      the kernel's float scalars (splat) and vectors loaded at the tile's
      origin ([128, 1] at [m0, j], [1, BN] at [i, n0]) and broadcast
    tile.store out, c[m0, n0]
    ```

    and replaces it with a persistent `llvm.func` kernel in the gpu.module:
    each block walks the tiles along the grid's x from its block id in
    strides of the grid (the host launches at most a block an SM); a TMA
    producer warpgroup and two WGMMA consumer warpgroups over S stages of
    shared memory synchronised by mbarriers, the author's m0 and n0 and
    step count cloned in with the tile for block_id(0), the epilogue
    evaluated on each accumulator element and stored directly or, for a
    16-bit `c` declared 16-byte aligned, through shared memory and TMA. The
    kernel takes the tensor maps of `a` and `b` by value, `c`'s address (or
    tensor map) and M, N, K, c's row stride and the tiles along x, then the
    epilogue's scalars and vectors (address, rows, columns, row stride); its
    attributes `tilejit.abi` and `tilejit.shared_bytes` give the launch.
    Anything else in such a kernel is reported as unsupported. Pipelined
    loops of other kernels are left to tile-lower-pipelined, and gemms
    outside a pipelined loop to convert-tile-to-gpu (mma.sync).
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::nvgpu::NVGPUDialect",
    "::mlir::NVVM::NVVMDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::scf::SCFDialect", "::mlir::memref::MemRefDialect",
    "::mlir::arith::ArithDialect", "::mlir::cf::ControlFlowDialect"
  ];
}

def TensorMapParams : Pass<"tile-tensor-map-params", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Pass a kernel's tensor maps by value, as grid constants.";
  let description = [{
    Runs after convert-gpu-to-nvvm. The last N arguments of an `llvm.func`
    kernel with `tilejit.tensor_maps = N` are the `!llvm.ptr` tensor maps
    tile-lower-pipelined appended; each becomes a 128-byte `llvm.byval`
    parameter aligned to 64 and marked `nvvm.grid_constant`, so that the
    TMA copies read the map where the launch put it (a copy in local
    memory, what a by-value parameter whose address is taken gets
    otherwise, is no tensor map to TMA). The attribute is removed.
    `gpu.func` cannot carry these argument attributes through
    convert-gpu-to-nvvm (nvvm.grid_constant is verified on kernels of the
    LLVM dialect only).
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect"
  ];
}

#endif // TILEJIT_CONVERSION_PASSES_TD
