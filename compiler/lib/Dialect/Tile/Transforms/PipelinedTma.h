//===- PipelinedTma.h - A pipelined loop's copies as TMA copies -*- C++ -*-===//
//
// tile-lower-pipelined issues the copies of a loop stages ahead; where every
// copy of the loop can be one TMA copy (isTmaCopy), it issues them as such:
// one thread a block expects the stage's bytes on the stage's mbarrier and
// issues `cp.async.bulk.tensor` from a tensor map the kernel takes by value,
// and every thread waits on the mbarrier's phase instead of cp.async groups.
//
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_DIALECT_TILE_TRANSFORMS_PIPELINEDTMA_H
#define TILEJIT_DIALECT_TILE_TRANSFORMS_PIPELINEDTMA_H

#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "mlir/IR/Builders.h"

namespace mlir::tile {

/// The discardable attribute that gives a shared tile's alignment in bytes
/// (a TMA copy's destination: 128); convert-tile-to-gpu allocates by it.
inline constexpr llvm::StringLiteral kSharedAlignAttr = "tilejit.align";
/// The launch arguments a lowering appended to a kernel (KernelAbi lines).
inline constexpr llvm::StringLiteral kAbiExtraAttr = "tilejit.abi_extra";
/// How many of a kernel's last arguments are tensor maps passed by value.
inline constexpr llvm::StringLiteral kTensorMapsAttr = "tilejit.tensor_maps";

/// Whether `copy` (into `tile`, in a loop of `stages`) can be one TMA copy:
/// two or more stages; its source a kernel argument with a unit inner stride
/// and rows promised 16-byte aligned (`tile.align`), not marked as a view
/// that may repeat elements (`tile.repeats`), of 1-, 2- or 4-byte
/// elements; the tile of the source's rank (at most 5), each side at most
/// 256, rows of a multiple of 16 bytes, a multiple of 128 bytes in all (each
/// stage's buffer 128-byte aligned), unpadded and not read by a tile.gemm.
bool isTmaCopy(CopyOp copy, AllocSharedOp tile, int64_t stages);

/// A loop's TMA state: its mbarriers (one a stage), the tensor map of each
/// copy, the issuing thread and the bytes a step's copies bring.
struct TmaPipeline {
  Value barriers;
  Value leader;
  SmallVector<Value> maps;
  int64_t bytes = 0;
  int64_t stages = 0;
  /// The loop sits in another loop or branch: it may run again, and its
  /// mbarriers are invalidated after it (endTma) to be initialised again.
  bool nested = false;
};

/// Before `loop` (at `b`): appends a tensor map argument to the kernel for
/// each copy (copies of the same source and box share one), with its ABI
/// line, and initialises the stages' mbarriers.
TmaPipeline setUpTma(OpBuilder &b, PipelinedOp loop, ArrayRef<CopyOp> copies,
                     int64_t stages);

/// The copies of one step: each copy's origin (outermost first) and
/// destination, built by the callback where the issuing thread runs.
struct TmaStep {
  SmallVector<SmallVector<Value>> origins;
  SmallVector<Value> dests;
};

/// The issuing thread expects a step's bytes on the mbarrier of `slot` and
/// issues the copies `step` builds (in its branch) into that stage.
void issueTma(OpBuilder &b, Location loc, const TmaPipeline &tma, Value slot,
              function_ref<TmaStep(OpBuilder &)> step);

/// After the loop (at `b`): where it may run again, once every thread has
/// left it, the issuing thread invalidates its mbarriers.
void endTma(OpBuilder &b, Location loc, const TmaPipeline &tma);

/// Every thread waits until the copies of step `step` have landed.
void waitTma(OpBuilder &b, Location loc, const TmaPipeline &tma, Value step,
             int64_t stages);

} // namespace mlir::tile

#endif // TILEJIT_DIALECT_TILE_TRANSFORMS_PIPELINEDTMA_H
