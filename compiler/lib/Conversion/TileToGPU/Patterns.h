//===- Patterns.h - Patterns that lower tile ops to per-thread code ------===//
//
// Shared by the files of the TileToGPU conversion. A fragment of N elements in
// a block of T threads becomes a vector<N/T x elt> in each thread; element l
// (row-major) of the fragment is slot l / T of thread l % T.
//
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_CONVERSION_TILETOGPU_PATTERNS_H
#define TILEJIT_CONVERSION_TILETOGPU_PATTERNS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::tile {

/// What the patterns of one kernel need to know: its block size, the value
/// of gpu.thread_id x at the kernel's entry, and the vector width V (in
/// elements) of the kernel's blocked layout: element l of a fragment is
/// element l % V of chunk l / V, and chunk q lives in thread q % T as the
/// thread's chunk q / T. With V = 1 consecutive threads own consecutive
/// elements; with V > 1 each thread loads and stores V contiguous elements
/// with one vector instruction.
struct ThreadMapping {
  int64_t threads;
  Value threadId;
  int64_t vectorWidth = 1;
};

/// Fragments -> per-thread vectors; every other type is kept.
void populateFragmentTypeConversion(TypeConverter &converter,
                                    const ThreadMapping &mapping);

/// tile.block_id -> gpu.block_id.
void populateIndexingToGPUPatterns(const TypeConverter &converter,
                                   RewritePatternSet &patterns);

/// tile.load and tile.store -> bounds-checked memref.load/store per slot.
void populateLoadStoreToGPUPatterns(const TypeConverter &converter,
                                    const ThreadMapping &mapping,
                                    RewritePatternSet &patterns);

/// tile.splat, arith.constant and element-wise arith ops on fragments -> the
/// same on vectors.
void populateElementwiseToGPUPatterns(const TypeConverter &converter,
                                      RewritePatternSet &patterns);

class TransposeOp;

/// The shared buffer a tile.transpose goes through: its source's last two
/// dimensions, each row padded by one 4-byte word, in workgroup memory.
MemRefType transposeBufferType(TransposeOp op);

/// tile.transpose -> stores to its shared buffer (`buffers`, one workgroup
/// attribution of the kernel per op), a barrier, transposed loads.
void populateTransposeToGPUPatterns(
    const TypeConverter &converter, const ThreadMapping &mapping,
    const llvm::DenseMap<Operation *, Value> &buffers,
    RewritePatternSet &patterns);

} // namespace mlir::tile

#endif // TILEJIT_CONVERSION_TILETOGPU_PATTERNS_H
