//===- ScanToGPU.cpp - tile.scan through shared memory ------------------===//
//
// An inclusive prefix sum along one dimension, Hillis-Steele: every slot
// writes its element to the op's shared buffer at its row-major index;
// then, for d = 1, 2, 4, ... below the dimension's size, every slot adds
// the element d before it along the dimension (none where its coordinate
// is below d) and writes the sum to the other half of the buffer, one
// barrier a step. The buffer has a word of padding after every 32
// elements, so that a thread's row of consecutive elements does not put
// every lane of a warp on a few banks. A thread's own running sums stay in
// its registers. A barrier before the first writes keeps a loop's previous
// user of the scratch buffer from reading what this one overwrites.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"

#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

/// Elements of one half of a scan's buffer: the fragment's, and a word of
/// padding after every 32.
int64_t scanHalfSize(int64_t count) { return count + (count + 31) / 32; }

struct ScanLowering : OpConversionPattern<ScanOp> {
  ScanLowering(const TypeConverter &tc, MLIRContext *ctx,
               const ThreadMapping &mapping,
               const llvm::DenseMap<Operation *, Value> &buffers)
      : OpConversionPattern(tc, ctx), mapping(mapping), buffers(buffers) {}

  LogicalResult
  matchAndRewrite(ScanOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    LayoutAttr layout = getLayout(op.getSource().getType());
    Value buffer = buffers.lookup(op);
    auto vecType = dyn_cast<VectorType>(adaptor.getSource().getType());
    if (!layout || !layout.getSliced().empty() || !buffer || !vecType)
      return rewriter.notifyMatchFailure(op, "no blocked layout or buffer");
    RankedTensorType type = op.getType();
    ArrayRef<int64_t> shape = type.getShape();
    const int64_t dim = static_cast<int64_t>(op.getDim());
    const int64_t size = shape[dim], count = type.getNumElements();
    int64_t stride = 1;
    for (int64_t d = dim + 1; d < type.getRank(); ++d)
      stride *= shape[d];
    const bool isFloat = isa<FloatType>(type.getElementType());
    auto cst = [&](int64_t v) {
      return arith::ConstantIndexOp::create(rewriter, loc, v).getResult();
    };
    Value zero =
        arith::ConstantOp::create(rewriter, loc, type.getElementType(),
                                  rewriter.getZeroAttr(type.getElementType()));

    // Each slot: its element, its row-major index, its coordinate along
    // the scanned dimension.
    const int64_t slots = vecType.getNumElements();
    SmallVector<Value> sums, index, coord;
    for (int64_t s = 0; s < slots; ++s) {
      SlotCoords c =
          slotCoords(rewriter, loc, layout, shape, mapping.threadId, s);
      sums.push_back(
          vector::ExtractOp::create(rewriter, loc, adaptor.getSource(), s));
      index.push_back(linearize(rewriter, loc, c.coords, shape));
      coord.push_back(c.coords[dim]);
    }
    // Where an element lives in a half of the buffer: a word of padding
    // after every 32 (so that threads holding rows of 8, 16 or 32
    // consecutive elements, a row a thread, hit 32 banks, not 4, 2 or 1).
    const int64_t halfSize = scanHalfSize(count);
    auto address = [&](Value i, int64_t half) {
      Value pad = arith::DivUIOp::create(rewriter, loc, i, cst(32));
      return arith::AddIOp::create(
                 rewriter, loc,
                 arith::AddIOp::create(rewriter, loc, i, pad).getResult(),
                 cst(half * halfSize))
          .getResult();
    };
    auto write = [&](int64_t half) {
      for (int64_t s = 0; s < slots; ++s)
        memref::StoreOp::create(rewriter, loc, sums[s], buffer,
                                ValueRange{address(index[s], half)});
    };
    gpu::BarrierOp::create(rewriter, loc); // the scratch's last user first
    write(0);
    gpu::BarrierOp::create(rewriter, loc);
    int64_t half = 0;
    for (int64_t d = 1; d < size; d *= 2) {
      SmallVector<Value> next;
      for (int64_t s = 0; s < slots; ++s) {
        Value has = arith::CmpIOp::create(
            rewriter, loc, arith::CmpIPredicate::uge, coord[s], cst(d));
        // The element d before (this one's own index where there is none,
        // so that the read stays inside).
        Value at = arith::SelectOp::create(
            rewriter, loc, has,
            arith::SubIOp::create(rewriter, loc, index[s], cst(d * stride)),
            index[s]);
        Value before = memref::LoadOp::create(rewriter, loc, buffer,
                                              ValueRange{address(at, half)});
        before = arith::SelectOp::create(rewriter, loc, has, before, zero);
        next.push_back(
            isFloat ? arith::AddFOp::create(rewriter, loc, before, sums[s])
                          .getResult()
                    : arith::AddIOp::create(rewriter, loc, before, sums[s])
                          .getResult());
      }
      sums = next;
      if (d * 2 >= size)
        break; // the last step: no one reads its sums from the buffer
      half ^= 1;
      write(half);
      gpu::BarrierOp::create(rewriter, loc);
    }
    rewriter.replaceOp(
        op, vector::FromElementsOp::create(rewriter, loc, vecType, sums));
    return success();
  }

  ThreadMapping mapping;
  const llvm::DenseMap<Operation *, Value> &buffers;
};

} // namespace

MemRefType mlir::tile::scanBufferType(ScanOp op) {
  RankedTensorType type = op.getType();
  auto space =
      gpu::AddressSpaceAttr::get(op.getContext(), gpu::AddressSpace::Workgroup);
  return MemRefType::get({2 * scanHalfSize(type.getNumElements())},
                         type.getElementType(), MemRefLayoutAttrInterface{},
                         space);
}

void mlir::tile::populateScanToGPUPatterns(
    const TypeConverter &converter, const ThreadMapping &mapping,
    const llvm::DenseMap<Operation *, Value> &buffers,
    RewritePatternSet &patterns) {
  patterns.add<ScanLowering>(converter, patterns.getContext(), mapping,
                             buffers);
}
