//===- CopyToGPU.cpp - tile.copy to cp.async pieces of every thread ------===//
//
// The box is cut into pieces of up to 16 bytes along its rows (as wide as
// the tensor's row promise, the tile's row and the shared rows allow), dealt
// to the threads in turn: piece q goes to thread q mod T. Each piece is one
// `cp.async` (nvgpu.device_async_copy) that reads only the bytes inside the
// tensor and fills the rest of the piece with zeros (a piece wholly outside
// reads nothing, from the tensor's first element). Pieces of fewer than 4
// bytes (no row promise for 1- and 2-byte elements) and elements of a
// tensor whose inner stride may not be 1 cannot be cp.async: they go one
// element at a time as loads and shared stores. A copy marked `async`
// (tile-lower-pipelined) ends there; any other commits its group, waits for it
// and passes a barrier, so that every thread sees the whole tile.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"

#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

/// The largest power of two dividing `n`, at most `limit`.
int64_t pow2Factor(int64_t n, int64_t limit) {
  return std::min<int64_t>(limit, n & -n);
}

/// The bytes of one piece: at most 16, dividing the tile's row and the
/// shared rows' stride, no more than the tensor's rows promise (its
/// elements' bytes without a promise or a unit inner stride).
int64_t pieceBytes(CopyOp op, Value dest) {
  auto src = cast<MemRefType>(op.getSource().getType());
  auto dst = cast<MemRefType>(dest.getType());
  const int64_t elt = src.getElementTypeBitWidth() / 8;
  int64_t bytes = pow2Factor(dst.getShape().back() * elt, 16);
  auto [strides, offset] = dst.getStridesAndOffset();
  if (strides.size() >= 2 &&
      !ShapedType::isDynamic(strides[strides.size() - 2]))
    bytes = pow2Factor(strides[strides.size() - 2] * elt, bytes);
  return std::min(bytes, std::max(elt, rowAlignment(op.getSource())));
}

/// Index arithmetic in one place.
struct Ix {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, int64_t y) {
    return y == 1 ? x : arith::MulIOp::create(b, loc, x, c(y)).getResult();
  }
  Value div(Value x, int64_t y) {
    return y == 1 ? x : arith::DivUIOp::create(b, loc, x, c(y)).getResult();
  }
  Value rem(Value x, int64_t y) {
    return arith::RemUIOp::create(b, loc, x, c(y));
  }
  Value ult(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
  }
  Value both(Value x, Value y) {
    return x ? arith::AndIOp::create(b, loc, x, y).getResult() : y;
  }
  Value select(Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, loc, cond, x, y);
  }
};

struct CopyLowering : OpConversionPattern<CopyOp> {
  CopyLowering(const TypeConverter &tc, MLIRContext *ctx,
               const ThreadMapping &mapping)
      : OpConversionPattern(tc, ctx), mapping(mapping) {}

  LogicalResult
  matchAndRewrite(CopyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value src = adaptor.getSource(), dest = adaptor.getDest();
    auto dstType = cast<MemRefType>(dest.getType());
    const int64_t elt = dstType.getElementTypeBitWidth() / 8;
    if (elt == 0)
      return op.emitOpError() << "cannot copy " << dstType.getElementType()
                              << " elements: requires whole bytes";
    ArrayRef<int64_t> shape = dstType.getShape();
    const int64_t rank = shape.size();
    const int64_t widest = pieceBytes(op, dest);
    const bool async =
        cast<MemRefType>(src.getType()).isLastDimUnitStride() && widest >= 4;
    const int64_t bytes = async ? widest : elt;
    const int64_t width = bytes / elt; // elements a piece
    const int64_t perRow = shape.back() / width;
    int64_t pieces = perRow;
    for (int64_t d = 0; d + 1 < rank; ++d)
      pieces *= shape[d];
    const int64_t threads = mapping.threads;
    Ix ix{rewriter, loc};
    SmallVector<Value> extents;
    for (int64_t d = 0; d < rank; ++d)
      extents.push_back(memref::DimOp::create(rewriter, loc, src, d));

    auto piece = [&](OpBuilder &pb, Value q) {
      Ix p{pb, loc};
      // The piece's place in the tile and in the tensor.
      SmallVector<Value> at(rank), from(rank);
      at[rank - 1] = p.mul(p.rem(q, perRow), width);
      Value rest = p.div(q, perRow);
      for (int64_t d = rank - 2; d >= 0; --d) {
        at[d] = d == 0 ? rest : p.rem(rest, shape[d]);
        rest = d == 0 ? rest : p.div(rest, shape[d]);
      }
      Value inside;
      for (int64_t d = 0; d < rank; ++d) {
        from[d] = p.add(adaptor.getIndices()[d], at[d]);
        inside = p.both(inside, p.ult(from[d], extents[d]));
      }
      if (!async) {
        // One element: a load (zero outside) and a shared store.
        Type type = dstType.getElementType();
        Value zero =
            arith::ConstantOp::create(pb, loc, type, pb.getZeroAttr(type));
        Value v =
            scf::IfOp::create(
                pb, loc, inside,
                [&](OpBuilder &ob, Location l) {
                  scf::YieldOp::create(
                      ob, l,
                      memref::LoadOp::create(ob, l, src, from).getResult());
                },
                [&](OpBuilder &ob, Location l) {
                  scf::YieldOp::create(ob, l, zero);
                })
                .getResult(0);
        memref::StoreOp::create(pb, loc, v, dest, at);
        return;
      }
      // The elements inside: min(width, extent - column) where the piece
      // starts inside, else 0 (and the address the tensor's first element).
      Value left = p.sub(extents[rank - 1], from[rank - 1]);
      Value count = p.select(p.ult(left, p.c(width)), left, p.c(width));
      count = p.select(inside, count, p.c(0));
      for (int64_t d = 0; d < rank; ++d)
        from[d] = p.select(inside, from[d], p.c(0));
      auto copy = nvgpu::DeviceAsyncCopyOp::create(
          pb, loc, nvgpu::DeviceAsyncTokenType::get(pb.getContext()), dest, at,
          src, from, pb.getIndexAttr(width), count,
          bytes == 16 ? pb.getUnitAttr() : UnitAttr());
      (void)copy;
    };

    const int64_t rounds = (pieces + threads - 1) / threads;
    for (int64_t r = 0; r < rounds; ++r) {
      Value q = r == 0 ? mapping.threadId
                       : ix.add(mapping.threadId, ix.c(r * threads));
      if ((r + 1) * threads <= pieces) {
        piece(rewriter, q);
        continue;
      }
      scf::IfOp::create(rewriter, loc, ix.ult(q, ix.c(pieces)),
                        [&](OpBuilder &ob, Location l) {
                          piece(ob, q);
                          scf::YieldOp::create(ob, l);
                        });
    }
    if (!op.getAsync()) {
      if (async) {
        NVVM::CpAsyncCommitGroupOp::create(rewriter, loc);
        NVVM::CpAsyncWaitGroupOp::create(rewriter, loc, 0);
      }
      gpu::BarrierOp::create(rewriter, loc);
    }
    rewriter.eraseOp(op);
    return success();
  }

  ThreadMapping mapping;
};

} // namespace

void mlir::tile::populateCopyToGPUPatterns(const TypeConverter &converter,
                                           const ThreadMapping &mapping,
                                           RewritePatternSet &patterns) {
  patterns.add<CopyLowering>(converter, patterns.getContext(), mapping);
}
