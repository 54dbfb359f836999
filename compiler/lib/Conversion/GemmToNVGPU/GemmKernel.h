//===- GemmKernel.h - The TMA + WGMMA kernel a pipelined gemm becomes ----===//
//
// Persistent: a block an SM (the host caps the grid's x dimension) walks
// the tiles the author's grid rule gives, from its block id in strides of
// the grid. One producer warpgroup whose elected thread issues the TMA
// copies of A and B `stages` K-tiles ahead, each completing on the stage's
// `full` mbarrier; two consumer warpgroups, each running wgmma.mma_async
// m64nBNk16 (k32 for fp8, k8 for tf32) on 64 rows of the 128 x BN tile,
// keeping one wgmma group in flight and releasing a stage on its `empty`
// mbarrier once the group that read it has retired. The stages and their
// mbarrier phases run on across tiles, so the producer loads the next
// tile's first K-tiles while the consumers store this one. The epilogue
// converts the f32 accumulators and stores them, masked at the M and N
// edges unless the author promised whole tiles.
//
// Shared memory is dynamic (stages x (A + B tiles), the two consumers'
// store buffers with `tmaStore`, and 1 KiB to realign to the 1024 bytes the
// 128-byte swizzle needs). The tensor maps arrive by value
// as grid constants (.param .align 64 .b8 [128]). Kernel parameters: (tensor
// map of A, tensor map of B, C (global pointer), M, N, K, ldc, the tiles
// along the grid's x (i64)).
//
// Built with builders: GemmKernel.cpp (the function, shared memory,
// mbarriers, the producer), GemmConsumer.cpp (the consumers' main loop and
// epilogue), WgmmaAsm.cpp (the K tile's wgmma instructions, the one PTX
// string of the kernel).
//
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_CONVERSION_GEMMTONVGPU_GEMMKERNEL_H
#define TILEJIT_CONVERSION_GEMMTONVGPU_GEMMKERNEL_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <functional>
#include <string>

namespace mlir::tile {

/// One specialisation of the kernel: a 128 x bn x bk tile, `stages` buffers.
struct GemmKernelConfig {
  std::string name;
  int bn = 256;
  int bk = 64;
  int stages = 4;
  std::string inputType =
      "bf16"; ///< "bf16", "f16", "f32" (tf32), "e4m3", "e5m2"
  std::string outputType = "bf16"; ///< "bf16", "f16" or "f32"
  /// Mask the epilogue's stores at the M and N edges; false when the
  /// author promised the tile inside C (whole tiles only).
  bool checkBounds = true;
  /// Store C through TMA (16-bit outputs whose rows the author declared
  /// 16-byte aligned, BN 64 or a multiple of 128, and room for the buffers
  /// beside the stages): each consumer writes its 64 rows, up to 128 columns
  /// at a time, to a buffer of its own in shared memory (128-byte swizzle,
  /// 64 x 64 boxes) and one thread stores the boxes asynchronously, clipped
  /// at C's edges, while the warpgroup goes on to its next tile.
  bool tmaStore = false;
};

/// A tile's origin and K-tile count, computed in the new kernel (from the
/// tile's index along the grid's x, the block ids along y and z and the
/// size parameters) by the caller.
struct GemmOrigin {
  Value m0, n0, count;
};
/// The origin of tile `block` (index) at the builder's insertion point;
/// `forEpilogue`: the consumers' call, which also brings in the indices the
/// epilogue reads.
using GemmOriginFn = std::function<FailureOr<GemmOrigin>(
    OpBuilder &, LLVM::LLVMFuncOp, Value block, bool forEpilogue)>;

/// The value the epilogue stores for the accumulator element `acc` (f32)
/// at (row, col) of C (indices): a scalar of the output type, built in the
/// kernel (the author's epilogue ops on scalars). Empty: the accumulator
/// converted to the output type.
using GemmEpilogueFn = std::function<Value(OpBuilder &, Location, Value acc,
                                           Value row, Value col)>;

/// Builds the kernel as an llvm.func named `config.name` at `b`'s insertion
/// point (in a gpu.module), with `extraParams` after the eight above (what
/// the epilogue reads); `origin` computes a tile's origin in it. On failure
/// of `origin` nothing is left behind.
FailureOr<LLVM::LLVMFuncOp> buildGemmKernel(OpBuilder &b, Location loc,
                                            const GemmKernelConfig &config,
                                            ArrayRef<Type> extraParams,
                                            const GemmOriginFn &origin,
                                            const GemmEpilogueFn &epilogue);

/// A config's name of `t`: "bf16", "f16", "f32", "e4m3", "e5m2"; "" for
/// any other type.
std::string gemmTypeName(Type t);

/// The MLIR type of a config's "bf16", "f16" or "f32"; bytes (i8) for fp8
/// (the shared tiles and TMA boxes of e4m3 and e5m2).
Type gemmElementType(OpBuilder &b, StringRef name);

/// Bytes of one input element (2; 1 for fp8, 4 for f32).
int gemmInputBytes(const GemmKernelConfig &config);

/// Dynamic shared memory the kernel needs, in bytes.
int64_t gemmSharedBytes(const GemmKernelConfig &config);

/// With `tmaStore`: the columns of a consumer's store buffer (up to 128),
/// its bytes, and the offset of the first buffer from the aligned base
/// (after the stages).
int64_t gemmStoreColumns(const GemmKernelConfig &config);
int64_t gemmStoreBufferBytes(const GemmKernelConfig &config);
int64_t gemmStoreBufferOffset(const GemmKernelConfig &config);

/// What the consumers need from the kernel's set-up (GemmKernel.cpp).
struct GemmConsumerContext {
  const GemmKernelConfig &config;
  Value barriers; ///< !nvgpu.mbarrier.group: full[s] = s, empty[s] = S + s
  Value aligned;  ///< the 1024-aligned shared address (index)
  Value warpgroupThread; ///< thread id within the warpgroup (index)
  Value warpgroup;       ///< 1 or 2 (index)
  /// The tiles along the grid's x this block takes: first, end, stride
  /// (index).
  Value firstTile, tiles, tileStride;
  /// A tile's origin and K-tile count at the builder's insertion point.
  std::function<GemmOrigin(OpBuilder &, Value tile)> origin;
  /// C's pointer (its tensor map's with `tmaStore`), M, N (index) and row
  /// stride (i64).
  Value c, m, n, ldc;
  const GemmEpilogueFn &epilogue;
};

/// The consumer warpgroups' part (GemmConsumer.cpp): for each tile, the
/// main loop over its K tiles and the epilogue.
void buildGemmConsumer(OpBuilder &b, Location loc,
                       const GemmConsumerContext &ctx);

/// The K tile's wgmma instructions as one inline-asm statement (WgmmaAsm.cpp):
/// each written as NVVM's lowering of nvvm.wgmma.mma_async writes it,
/// chained through the same `accs.size()` tied accumulator operands, from
/// the shared-memory descriptors of A and B for each 32-byte K step.
SmallVector<Value> buildWgmmaTile(OpBuilder &b, Location loc,
                                  const GemmKernelConfig &config,
                                  ValueRange accs, ArrayRef<Value> descA,
                                  ArrayRef<Value> descB);

} // namespace mlir::tile

#endif // TILEJIT_CONVERSION_GEMMTONVGPU_GEMMKERNEL_H
