//===- Passes.td - Passes on the tile dialect ----------------------------===//
#ifndef TILEJIT_DIALECT_TILE_TRANSFORMS_PASSES_TD
#define TILEJIT_DIALECT_TILE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AssignLayouts : Pass<"tile-assign-layouts", "::mlir::ModuleOp"> {
  let summary = "Give every fragment of every tile kernel a #tile.layout.";
  let description = [{
    Chooses the kernel's vector width (the widest 16-byte-or-less vector that
    every global access of an unreduced fragment can use, from the tensors'
    `tile.align` promises and unit inner strides) and gives each fragment
    a layout: loads, transposes and splats get the blocked layout of their
    own shape; a reduction gets its source's layout with the reduced
    dimension sliced; a broadcast of a reduction result un-slices it again;
    a reshape keeps the element order; element-wise ops take their
    operands' common layout (a splat or constant operand is re-made in it).
    Where two layouts meet (element-wise operands, a loop's or if's yield,
    a broadcast of a fragment that is not a reduction of the result's
    shape) it inserts a tile.convert_layout. Reports fragments that cannot
    be spread over the threads, unsupported reductions and shuffles.

    With `report-vector-width` it remarks each kernel's width and points
    at the op that narrowed it last (an unaligned access, a fragment too
    small for wider vectors): `tilejit compile OP --dump tile |
    tilejit-opt -tile-lower-pipelined -tile-assign-layouts=report-vector-width`.
  }];
  let options = [
    Option<"reportVectorWidth", "report-vector-width", "bool", "false",
           "Remark each kernel's vector width and the op that narrowed it">
  ];
  let dependentDialects = ["::mlir::tile::TileDialect"];
}

def LowerPipelined : Pass<"tile-lower-pipelined", "::mlir::ModuleOp"> {
  let summary = "Turn each tile.pipelined loop into an scf.for whose copies run stages - 1 steps ahead.";
  let description = [{
    For a loop of S stages, every shared tile a `tile.copy` of the body
    fills gets S buffers (`tile.alloc_shared` of S x its shape; step k
    uses buffer k mod S through a `memref.subview`). The copies, marked
    `async` (each thread's `cp.async` pieces, see convert-tile-to-gpu),
    of steps 0 .. S - 2 are issued before the loop, one commit group a
    step; step k then waits until at most S - 2 groups are pending (its
    own tiles have landed), passes a barrier (every thread's pieces are
    visible, and every thread has finished step k - 1, whose buffer the
    next copy reuses), issues the copies of step k + S - 1 (if there is
    one) as a group, and runs the rest of the body on its buffers. One
    stage copies, waits and passes a barrier before the body and another
    after it. The loop-carried values become the scf.for's iter_args.

    Where every copy of a loop of two or more stages can be one TMA copy
    (its source a kernel argument with a unit inner stride and rows
    promised 16-byte aligned; its tile of the source's rank, sides of at
    most 256, rows of a multiple of 16 bytes, a multiple of 128 bytes in
    all, not a tile.gemm operand), the loop runs on TMA instead: the kernel
    takes a tensor map by value for each source and box (an `!llvm.ptr`
    argument appended to it, its ABI line in `tilejit.abi_extra`, their
    count in `tilejit.tensor_maps`), each stage an mbarrier initialised
    before the loop, each stage's buffer 128-byte aligned
    (`tilejit.align`). Step k passes a barrier (every thread has left step
    k - 1), thread 0 expects the bytes of step k + S - 1 on its stage's
    mbarrier and issues its `nvgpu.tma.async.load`s, and every thread
    waits for phase k / S of the mbarrier of stage k mod S. A loop inside
    another loop or branch ends with a barrier and thread 0 invalidating
    its mbarriers (`nvvm.mbarrier.inval`), which its next run initialises
    again.

    The copies must sit at the body's top level, fill a tile allocated
    outside the loop that nothing else writes and nothing outside the
    loop uses, and take their origin from the step and values defined
    outside the loop through side-effect-free ops. Loops that
    convert-tile-gemm-to-nvgpu takes (a gemm main loop of a 384-thread
    kernel) are gone by the time this pass runs.
  }];
  let dependentDialects = [
    "::mlir::tile::TileDialect", "::mlir::scf::SCFDialect",
    "::mlir::memref::MemRefDialect", "::mlir::gpu::GPUDialect",
    "::mlir::NVVM::NVVMDialect", "::mlir::arith::ArithDialect",
    "::mlir::nvgpu::NVGPUDialect", "::mlir::LLVM::LLVMDialect"
  ];
}

def AssignSharedLayouts : Pass<"tile-assign-shared-layouts", "::mlir::ModuleOp"> {
  let summary = "Give every shared tile the layout its users read best (row_pad).";
  let description = [{
    A shared tile that `tile.gemm` reads through mma.sync (itself or, after
    tile-lower-pipelined, its stage buffers' views) gets its rows padded so
    that a warp's fragment loads hit distinct banks: a pair at (g, 2 i) for
    rows g < 8 and i < 4, 4 bytes of a 16-bit tile or 8 bytes of an f32
    tile; rows of 8 (mod 16) elements start an odd multiple of 4 (16-bit)
    or 8 (f32) banks apart, so K a multiple of 16 gets 8 elements (16 or 32
    bytes) and K = 8 (mod 16) none. A transposed operand (K rows; the
    gemm's transpose_a/b), read an element at a time at rows 2 i (+ 1) and
    columns g, gets rows of 4 (mod 16) words: lane (g, i) on bank 8 i + g
    (f32) or 8 i + g / 2 (16-bit). convert-tile-to-gpu
    allocates each tile with its row_pad. Tiles of a TMA + WGMMA kernel are
    laid out (128-byte swizzle) by convert-tile-gemm-to-nvgpu, which runs
    first.
  }];
  let dependentDialects = ["::mlir::tile::TileDialect"];
}

#endif // TILEJIT_DIALECT_TILE_TRANSFORMS_PASSES_TD
