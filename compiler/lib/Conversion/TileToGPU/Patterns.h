//===- Patterns.h - Patterns that lower tile ops to per-thread code ------===//
//
// Shared by the files of the TileToGPU conversion. A fragment with layout
// #tile.layout<shape = S, threads = T, vector = V, ...> becomes, in each
// thread, a vector<product(S)/T x elt> of its slots (see the layout's
// description in TileAttrs.td).
//
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_CONVERSION_TILETOGPU_PATTERNS_H
#define TILEJIT_CONVERSION_TILETOGPU_PATTERNS_H

#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include <optional>

namespace mlir::tile {

class LayoutAttr;

/// What the patterns of one kernel need to know: its block size, the
/// value of gpu.thread_id x at the kernel's entry, and the transposes and
/// reductions that must wait for every thread (a barrier) before writing
/// their shared buffer: those in a loop whose body has no other barrier,
/// where a fast warp's next step would overwrite what a slow warp still
/// reads.
struct ThreadMapping {
  int64_t threads;
  Value threadId;
  llvm::DenseSet<Operation *> waitFirst = {};
};

/// The layout tile-assign-layouts gave a fragment type (null if none).
LayoutAttr getLayout(Type type);

/// The index, in the layout's distribution shape (row-major), of the
/// element in slot `slot` of this thread.
Value slotLinearIndex(OpBuilder &b, Location loc, LayoutAttr layout,
                      Value threadId, int64_t slot);

/// The row-major index of `coords` in `shape`.
Value linearize(OpBuilder &b, Location loc, ValueRange coords,
                ArrayRef<int64_t> shape);

/// The coordinates in a fragment of `shape` of the element in slot `slot`
/// of this thread, and, for a layout with sliced dimensions, whether this
/// slot is the one (of those holding that element) that stores it: its
/// sliced coordinates are 0. `representative` is null when not sliced.
struct SlotCoords {
  SmallVector<Value> coords;
  Value representative;
};
SlotCoords slotCoords(OpBuilder &b, Location loc, LayoutAttr layout,
                      ArrayRef<int64_t> shape, Value threadId, int64_t slot);

/// False when slot `slot` of a sliced layout is the representative of its
/// element in no thread: its own offset makes a sliced coordinate nonzero.
/// True for every slot of a layout without sliced dimensions.
/// (Stores and atomics of reduction results skip such slots rather than
/// test them at run time.)
bool mayRepresent(LayoutAttr layout, int64_t slot);

/// The slot holding the same element as `slot` (a copy, after a reduction
/// over a sliced dimension) whose coordinate along each sliced dimension is
/// 0 where the slot decides it statically: dimensions of whole rounds of
/// threads x vector elements (by the chunk) and dimensions whose stride
/// divides the vector (by the lane); `slot` itself otherwise.
int64_t canonicalSlot(LayoutAttr layout, int64_t slot);

/// A sliced layout whose every chunk holds whole groups of its sliced
/// dimensions (each sliced dimension's span divides the vector) as the
/// unsliced layout of its representatives: vector / (product of the sliced
/// sizes) consecutive fragment elements a chunk, chunk q's from q times
/// that on (8 e2m1 codes a chunk, packed in pairs, are 4 consecutive
/// bytes). The representatives are each chunk's lanes whose sliced
/// coordinates are 0, in order (compactLanes). Null when the chunks split
/// a group or the result would not be such a layout.
LayoutAttr compactLayout(LayoutAttr layout);
/// The lanes of a chunk of `layout` that compactLayout keeps, in order.
SmallVector<int64_t> compactLanes(LayoutAttr layout);

/// Where a conversion from `from` to `to` moves no data between threads:
/// for each slot of `to`, a slot of `from` that holds the same element in
/// every thread (e.g. one element a thread as (1, T, 1) with vector 1, and
/// the same as a reduction result sliced along a vector of V); nullopt
/// when some thread would need another's element.
std::optional<SmallVector<int64_t>> registerPermutation(LayoutAttr from,
                                                        LayoutAttr to);

/// Fragments with a layout -> per-thread vectors; every other type is kept.
void populateFragmentTypeConversion(TypeConverter &converter);

/// tile.block_id -> gpu.block_id; tile.iota -> each slot's coordinate.
void populateIndexingToGPUPatterns(const TypeConverter &converter,
                                   const ThreadMapping &mapping,
                                   RewritePatternSet &patterns);

/// math.exp, math.log, math.log1p -> CUDA's expf, logf, log1pf instruction
/// for instruction (bit-identical results); math.absf/absi -> sign-bit and
/// select arithmetic; math.sqrt -> sqrt.rn.f32 (IEEE), math.rsqrt ->
/// rsqrt.approx.f32, math.fma -> fma.rn. No libdevice.
void populateMathToGPUPatterns(const TypeConverter &converter,
                               RewritePatternSet &patterns);

/// tile.load and tile.store -> bounds-checked vector or element accesses;
/// tile.atomic -> bounds-checked memref.atomic_rmw per slot.
void populateLoadStoreToGPUPatterns(const TypeConverter &converter,
                                    const ThreadMapping &mapping,
                                    RewritePatternSet &patterns);

/// The bytes every row of a global tensor (a kernel argument) starts at a
/// multiple of: its `tile.align` promise where its inner stride is 1, else
/// 1.
int64_t rowAlignment(Value memref);

/// The memref.atomic_rmw kind of a tile.atomic / tile.store_at combine on
/// elements of `elt` (floats: addf, maxnumf; integers: addi, maxs, maxu).
arith::AtomicRMWKind atomicRMWKind(AtomicKind kind, Type elt);

/// tile.copy -> each thread's cp.async pieces of the box (zeros outside the
/// tensor), then, unless the copy is `async`, the group's wait and a
/// barrier.
void populateCopyToGPUPatterns(const TypeConverter &converter,
                               const ThreadMapping &mapping,
                               RewritePatternSet &patterns);

/// tile.splat, arith.constant and element-wise arith ops on fragments -> the
/// same on vectors; tile.broadcast of a reduction result and tile.reshape
/// -> their source (the slots do not move).
void populateElementwiseToGPUPatterns(const TypeConverter &converter,
                                      RewritePatternSet &patterns);

/// tile.stack / tile.unstack -> their slots renamed (see StackToGPU.cpp).
void populateStackToGPUPatterns(const TypeConverter &converter,
                                RewritePatternSet &patterns);

/// arith.truncf to 8-bit floats -> pairs of saturating, round-to-nearest-
/// even conversions (cvt.rn.satfinite.e4m3x2.f32 and e5m2x2).
void populateCastToGPUPatterns(const TypeConverter &converter,
                               RewritePatternSet &patterns);

/// tile.shuffle_xor / tile.shuffle_idx -> one gpu.shuffle xor / idx per
/// slot.
void populateShuffleToGPUPatterns(const TypeConverter &converter,
                                  const ThreadMapping &mapping,
                                  RewritePatternSet &patterns);

class ReduceOp;

/// The shared buffer a tile.reduce needs to combine warps, or null when its
/// threads of one row all lie in one warp.
MemRefType reduceBufferType(ReduceOp op);

/// tile.reduce -> in-thread combining, xor shuffles within warps, shared
/// memory across warps (`buffers`, one workgroup attribution per op).
void populateReduceToGPUPatterns(
    const TypeConverter &converter, const ThreadMapping &mapping,
    const llvm::DenseMap<Operation *, Value> &buffers,
    RewritePatternSet &patterns);

/// Writes the first copy of each element of a fragment (`slots`, this
/// thread's vector in `layout`) to `buffer` at its row-major index in
/// `shape` (booleans as bytes, when the buffer holds bytes).
void storeFragment(OpBuilder &b, Location loc, LayoutAttr layout,
                   ArrayRef<int64_t> shape, Value slots, Value buffer,
                   Value threadId);

/// Reads this thread's slots in `layout` of a fragment of `shape` from
/// `buffer` (row-major) into a vector of `type`.
Value loadFragment(OpBuilder &b, Location loc, LayoutAttr layout,
                   ArrayRef<int64_t> shape, VectorType type, Value buffer,
                   Value threadId);

class ConvertLayoutOp;

/// The shared buffer a tile.convert_layout goes through: one element of the
/// fragment each (booleans as bytes); null when both layouts are the same.
MemRefType convertLayoutBufferType(ConvertLayoutOp op);

/// tile.convert_layout -> a barrier, writes of each element's first copy to
/// its shared buffer, a barrier, reads in the result layout (`buffers`: a
/// view of the kernel's scratch, which conversions and gemms share).
void populateConvertLayoutToGPUPatterns(
    const TypeConverter &converter, const ThreadMapping &mapping,
    const llvm::DenseMap<Operation *, Value> &buffers,
    RewritePatternSet &patterns);

class ScanOp;

/// The shared buffer a tile.scan goes through: two copies of the fragment
/// (one a step's reads, one its writes), each with a word of padding after
/// every 32 elements.
MemRefType scanBufferType(ScanOp op);

/// tile.scan -> a barrier, each element to the shared buffer, then a step of
/// reads, adds and writes (and one barrier) per power of two below the
/// dimension's size (`buffers`: a view of the kernel's scratch).
void populateScanToGPUPatterns(
    const TypeConverter &converter, const ThreadMapping &mapping,
    const llvm::DenseMap<Operation *, Value> &buffers,
    RewritePatternSet &patterns);

class GemmOp;

/// Whether a tile.gemm outside a pipelined loop can become mma.sync (bf16,
/// f16 or tf32 operands; M, N, K multiples of 16, 8 and the K step); the
/// error names what cannot.
LogicalResult checkMmaGemm(GemmOp op);

class AllocSharedOp;

/// The shared buffer a tile.gemm's accumulator goes through (M x N f32).
MemRefType gemmBufferType(GemmOp op);

/// tile.gemm -> warp-level mma.sync m16n8k8 (tf32) / m16n8k16 (bf16, f16)
/// with operands from its shared tiles and the accumulator through its
/// shared buffer (`buffers`); see GemmToMMA.cpp.
void populateGemmToMMAPatterns(
    const TypeConverter &converter, const ThreadMapping &mapping,
    const llvm::DenseMap<Operation *, Value> &buffers,
    RewritePatternSet &patterns);

class TransposeOp;

/// The shared buffer a tile.transpose goes through, in workgroup memory:
/// the result's rows as swizzled 4-byte words when 1- or 2-byte elements can
/// be exchanged a word at a time; else its source's last two dimensions,
/// each row padded by one 4-byte word.
MemRefType transposeBufferType(TransposeOp op);

/// tile.transpose -> stores to its shared buffer (`buffers`, one workgroup
/// attribution of the kernel per op), a barrier, transposed loads; words
/// exchanged by warp shuffles and transposed by byte permutes where they fit
/// (see TransposeToGPU.cpp).
void populateTransposeToGPUPatterns(
    const TypeConverter &converter, const ThreadMapping &mapping,
    const llvm::DenseMap<Operation *, Value> &buffers,
    RewritePatternSet &patterns);

} // namespace mlir::tile

#endif // TILEJIT_CONVERSION_TILETOGPU_PATTERNS_H
