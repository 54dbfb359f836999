//===- ReduceToGPU.cpp - tile.reduce to shuffles and shared memory -------===//
//
// With power-of-two sizes, the reduced coordinate of element l (its index in
// the layout's distribution shape) is a range of l's bits. The layout spreads
// l's bits over the vector lane (low bits), the thread (next log2 T bits) and
// the thread's chunk (high bits). So the elements of one result element are:
// slots of one thread that differ in the reduced lane/chunk bits (combined in
// registers), threads that differ in reduced lane bits of the thread index
// (combined with xor shuffles, after which every such thread holds the
// result), and warps that differ in reduced warp bits (combined through the
// op's shared buffer, read in one fixed order so that all warps agree; with
// many results per thread the warps split the rows, see CrossWarp).
// A dimension of any size is reduced in registers when the dimensions after
// it hold whole rounds of threads x vector elements: its elements are then
// the same vector lane of chunks a fixed stride apart.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"

#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

constexpr int64_t kWarpSize = 32;

/// Where the reduced coordinate lies among the bits of (slot, thread).
/// When the dimensions after the reduced one hold whole rounds of
/// threads x vector elements, the reduced dimension (of any size) lies in
/// the thread's chunks instead: element d of it is `d * chunkStride` slots
/// after element 0.
struct ReduceBits {
  int64_t logVector = 0, logThreads = 0;
  uint64_t reduced = 0;  ///< mask over the bits of l
  uint64_t slotMask = 0; ///< reduced bits that index a thread's slots
  uint64_t laneMask = 0; ///< reduced bits of the thread index, within a warp
  uint64_t warpMask = 0; ///< reduced bits of the warp index
  int64_t chunkStride = 0, size = 0, vector = 1;

  ReduceBits(LayoutAttr layout, int64_t dim) {
    ArrayRef<int64_t> shape = layout.getShape();
    int64_t inner = 1;
    for (int64_t d = dim + 1; d < static_cast<int64_t>(shape.size()); ++d)
      inner *= shape[d];
    const int64_t round = layout.getThreads() * layout.getVector();
    if (inner % round == 0) {
      vector = layout.getVector();
      chunkStride = inner / round;
      size = shape[dim];
      return;
    }
    int64_t low = llvm::Log2_64(inner);
    int64_t high = low + llvm::Log2_64(shape[dim]);
    reduced = ((uint64_t(1) << high) - 1) & ~((uint64_t(1) << low) - 1);
    logVector = llvm::Log2_64(layout.getVector());
    logThreads = llvm::Log2_64(layout.getThreads());
    uint64_t lanesOfVector = (uint64_t(1) << logVector) - 1;
    uint64_t threadBits =
        (reduced >> logVector) & ((uint64_t(1) << logThreads) - 1);
    // Slot bits: the vector lane, then the chunk above the thread bits.
    slotMask = (reduced & lanesOfVector) |
               ((reduced >> (logVector + logThreads)) << logVector);
    laneMask = threadBits & (kWarpSize - 1);
    warpMask = threadBits / kWarpSize;
  }

  /// The slot that holds the combined value of `slot`'s result element:
  /// the one whose reduced coordinate is 0.
  int64_t representative(int64_t slot) const {
    if (chunkStride) {
      const int64_t chunk = slot / vector;
      return slot - (chunk / chunkStride) % size * chunkStride * vector;
    }
    return slot & ~static_cast<int64_t>(slotMask);
  }
};

/// How the partials of `reps` representatives are combined across the
/// `group` warps that share them (through the op's shared buffer, one row
/// per representative). Each thread may combine every row itself (reps x
/// group loads), or, when that costs much more, the group splits the rows:
/// member g combines rows g, g + group, ... into `rounds` extra rows, and
/// after a second barrier each thread reads the reps totals.
struct CrossWarp {
  int64_t reps, group, shift, rounds;
  int64_t groupBits; ///< the reduced warp bits, as bits of the thread index
  bool split;

  CrossWarp(const ReduceBits &bits, int64_t reps)
      : reps(reps), group(int64_t(1) << llvm::popcount(bits.warpMask)),
        shift(llvm::countr_zero(bits.warpMask) + llvm::Log2_64(kWarpSize)),
        rounds((reps + group - 1) / group),
        groupBits(static_cast<int64_t>(bits.warpMask)
                  << llvm::Log2_64(kWarpSize)),
        split(reps * group >= 2 * (rounds * group + reps)) {}

  /// Rows of the buffer.
  int64_t rows() const { return split ? reps + rounds : reps; }
};

/// Combines two partial results.
Value combine(OpBuilder &b, Location loc, ReduceKind kind, Value x, Value y) {
  bool isFloat = isa<FloatType>(x.getType());
  switch (kind) {
  case ReduceKind::sum:
    return isFloat ? arith::AddFOp::create(b, loc, x, y).getResult()
                   : arith::AddIOp::create(b, loc, x, y).getResult();
  case ReduceKind::max:
  case ReduceKind::absmax:
    return isFloat ? arith::MaxNumFOp::create(b, loc, x, y).getResult()
                   : arith::MaxSIOp::create(b, loc, x, y).getResult();
  case ReduceKind::min:
    return isFloat ? arith::MinNumFOp::create(b, loc, x, y).getResult()
                   : arith::MinSIOp::create(b, loc, x, y).getResult();
  }
  return x;
}

struct ReduceLowering : OpConversionPattern<ReduceOp> {
  ReduceLowering(const TypeConverter &tc, MLIRContext *ctx,
                 const ThreadMapping &mapping,
                 const llvm::DenseMap<Operation *, Value> &buffers)
      : OpConversionPattern(tc, ctx), mapping(mapping), buffers(buffers) {}

  LogicalResult
  matchAndRewrite(ReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    LayoutAttr layout = getLayout(op.getSource().getType());
    auto vecType = cast<VectorType>(adaptor.getSource().getType());
    Type elt = vecType.getElementType();
    ReduceBits bits(layout, static_cast<int64_t>(op.getDim()));
    if ((bits.laneMask || bits.warpMask) && elt.getIntOrFloatBitWidth() != 32)
      return rewriter.notifyMatchFailure(op, "shuffles need 32-bit elements "
                                             "(tile-assign-layouts checks)");
    const int64_t slots = vecType.getNumElements();

    // 1. In the thread: each representative slot combines its group.
    // Copies left by an earlier reduction take no part (see canonicalSlot).
    llvm::SmallMapVector<int64_t, Value, 8> partial;
    for (int64_t slot = 0; slot < slots; ++slot) {
      if (canonicalSlot(layout, slot) != slot)
        continue;
      Value x =
          vector::ExtractOp::create(rewriter, loc, adaptor.getSource(), slot);
      if (op.getKind() == ReduceKind::absmax)
        x = math::AbsFOp::create(rewriter, loc, x);
      int64_t rep = bits.representative(slot);
      auto [it, inserted] = partial.insert({rep, x});
      if (!inserted)
        it->second = combine(rewriter, loc, op.getKind(), it->second, x);
    }

    // 2. In the warp: xor shuffles over the reduced lane bits.
    Value width = arith::ConstantIntOp::create(rewriter, loc, kWarpSize, 32);
    for (int64_t bit = 0; bit < 5; ++bit) {
      if (!(bits.laneMask & (uint64_t(1) << bit)))
        continue;
      Value offset =
          arith::ConstantIntOp::create(rewriter, loc, int64_t(1) << bit, 32);
      for (auto &[rep, value] : partial) {
        Value other = gpu::ShuffleOp::create(rewriter, loc, value, offset,
                                             width, gpu::ShuffleMode::XOR)
                          .getShuffleResult();
        value = combine(rewriter, loc, op.getKind(), value, other);
      }
    }

    // 3. Across warps: through shared memory, [representative][thread].
    if (bits.warpMask) {
      Value buffer = buffers.lookup(op);
      if (!buffer)
        return rewriter.notifyMatchFailure(op, "no shared buffer");
      auto cst = [&](int64_t v) {
        return arith::ConstantIndexOp::create(rewriter, loc, v).getResult();
      };
      const CrossWarp plan(bits, static_cast<int64_t>(partial.size()));
      if (mapping.waitFirst.contains(op) && !plan.split)
        gpu::BarrierOp::create(rewriter, loc); // the last step's reads first
      int64_t row = 0;
      for (auto &[rep, value] : partial)
        memref::StoreOp::create(rewriter, loc, value, buffer,
                                ValueRange{cst(row++), mapping.threadId});
      gpu::BarrierOp::create(rewriter, loc);
      // The threads of a group: ours with its reduced warp bits replaced,
      // in increasing order.
      Value base = arith::AndIOp::create(rewriter, loc, mapping.threadId,
                                         cst(~plan.groupBits));
      auto member = [&](Value at) {
        return arith::OrIOp::create(rewriter, loc, base, at).getResult();
      };
      // The representative in `row`, combined over the group in a fixed
      // order (so that every thread that computes it gets the same bits).
      auto combineRow = [&](Value rowIndex) {
        Value total;
        for (int64_t g = 0; g < plan.group; ++g) {
          Value x = memref::LoadOp::create(
              rewriter, loc, buffer,
              ValueRange{rowIndex, member(cst(g << plan.shift))});
          total = total ? combine(rewriter, loc, op.getKind(), total, x) : x;
        }
        return total;
      };
      if (!plan.split) {
        row = 0;
        for (auto &[rep, value] : partial)
          value = combineRow(cst(row++));
      } else {
        // Member g of the group combines rows g, g + G, ... (the last row
        // again where it runs out) into rows reps + i of its own column,
        // then every member reads each row's total from its maker.
        Value g = arith::ShRUIOp::create(
            rewriter, loc,
            arith::AndIOp::create(rewriter, loc, mapping.threadId,
                                  cst(plan.groupBits)),
            cst(plan.shift));
        for (int64_t i = 0; i < plan.rounds; ++i) {
          Value r = arith::MinUIOp::create(
              rewriter, loc,
              arith::AddIOp::create(rewriter, loc, g, cst(i * plan.group)),
              cst(plan.reps - 1));
          memref::StoreOp::create(
              rewriter, loc, combineRow(r), buffer,
              ValueRange{cst(plan.reps + i), mapping.threadId});
        }
        gpu::BarrierOp::create(rewriter, loc);
        row = 0;
        for (auto &[rep, value] : partial) {
          value = memref::LoadOp::create(
              rewriter, loc, buffer,
              ValueRange{cst(plan.reps + row / plan.group),
                         member(cst((row % plan.group) << plan.shift))});
          ++row;
        }
      }
    }

    SmallVector<Value> elements;
    for (int64_t slot = 0; slot < slots; ++slot)
      elements.push_back(
          partial.lookup(bits.representative(canonicalSlot(layout, slot))));
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, vecType, elements);
    return success();
  }

  ThreadMapping mapping;
  const llvm::DenseMap<Operation *, Value> &buffers;
};

} // namespace

MemRefType mlir::tile::reduceBufferType(ReduceOp op) {
  LayoutAttr layout = getLayout(op.getSource().getType());
  if (!layout)
    return {};
  ReduceBits bits(layout, static_cast<int64_t>(op.getDim()));
  if (!bits.warpMask)
    return {};
  int64_t slots = layout.getSlots();
  llvm::SmallDenseSet<int64_t> reps;
  for (int64_t slot = 0; slot < slots; ++slot)
    if (canonicalSlot(layout, slot) == slot)
      reps.insert(bits.representative(slot));
  auto space =
      gpu::AddressSpaceAttr::get(op.getContext(), gpu::AddressSpace::Workgroup);
  const CrossWarp plan(bits, static_cast<int64_t>(reps.size()));
  return MemRefType::get({plan.rows(), layout.getThreads()},
                         op.getSource().getType().getElementType(),
                         MemRefLayoutAttrInterface{}, space);
}

void mlir::tile::populateReduceToGPUPatterns(
    const TypeConverter &converter, const ThreadMapping &mapping,
    const llvm::DenseMap<Operation *, Value> &buffers,
    RewritePatternSet &patterns) {
  patterns.add<ReduceLowering>(converter, patterns.getContext(), mapping,
                               buffers);
}
