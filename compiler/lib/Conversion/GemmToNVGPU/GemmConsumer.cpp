//===- GemmConsumer.cpp - The gemm kernel's consumer warpgroups ----------===//
//
// Each consumer warpgroup owns 64 rows of each 128 x BN tile the block
// takes. Per K tile it waits for the stage's `full` mbarrier, runs the tile's
// wgmma instructions (WgmmaAsm.cpp) on the 128-byte-swizzled shared operands
// through their descriptors, commits them and waits until one group is in
// flight, then (one thread a warp) releases the stage the retired group read.
// The main loop carries the BN / 2 accumulators as scalars and is written as
// blocks in an scf.execute_region: a struct phi would cost the back end BN^2 /
// 4 extractions, and the back edge carries `llvm.loop.unroll.disable` (LLVM
// would peel the first step to drop its `kt > 0` test, doubling the wgmma
// code). The epilogue converts each accumulator pair and stores it, masked at
// the M and N edges unless the author promised whole tiles. The K tiles are
// counted across the block's tiles (their stages and phases), and the stage of
// a tile's last K tile is released after its final wait, before the epilogue,
// for the producer to refill.
//
//===----------------------------------------------------------------------===//
#include "GemmKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

/// A wgmma shared-memory descriptor of K-major tiles with the 128-byte
/// swizzle: bits [0,14) address >> 4, [16,30) LBO >> 4 = 1 (unused),
/// [32,46) SBO >> 4 = 1024 >> 4 (8 rows of 128 bytes), [62,64) swizzle
/// mode 1 (128 bytes).
Value descriptor(OpBuilder &b, Location loc, Value address) {
  auto i64 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  };
  Value field = arith::ShRUIOp::create(
      b, loc, arith::AndIOp::create(b, loc, address, i64(0x3ffff)), i64(4));
  return arith::OrIOp::create(b, loc, field, i64(4611686293305360384));
}

/// The main loop over a tile's `count` K tiles, the block's K tiles `g0`
/// and on; returns the accumulators.
SmallVector<Value> mainLoop(OpBuilder &b, Location loc,
                            const GemmConsumerContext &ctx, Value descA0,
                            Value descB0, Value releaser, Value g0,
                            Value count) {
  const GemmKernelConfig &c = ctx.config;
  MLIRContext *mctx = b.getContext();
  const int64_t stages = c.stages, elt = gemmInputBytes(c);
  const int64_t aBytes = 128 * c.bk * elt, bBytes = c.bn * c.bk * elt;
  const int nacc = c.bn / 2, steps = c.bk / (32 / elt);
  auto idx = [&](OpBuilder &ib, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(ib, loc, v);
  };
  auto i64 = [&](OpBuilder &ib, int64_t v) -> Value {
    return arith::ConstantIntOp::create(ib, loc, ib.getI64Type(), v);
  };
  Type f32 = b.getF32Type();
  SmallVector<Type> types(nacc, f32);
  Value zero =
      arith::ConstantFloatOp::create(b, loc, b.getF32Type(), APFloat(0.0f));
  Value ticks = idx(b, 10000000);

  auto region = scf::ExecuteRegionOp::create(b, loc, types);
  Block *entry = &region.getRegion().emplaceBlock();
  Block *head = new Block(), *body = new Block(), *done = new Block();
  region.getRegion().push_back(head);
  region.getRegion().push_back(body);
  region.getRegion().push_back(done);
  Value kt = head->addArgument(b.getIndexType(), loc);
  SmallVector<Value> accs;
  for (int i = 0; i < nacc; ++i)
    accs.push_back(head->addArgument(f32, loc));

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(entry);
  SmallVector<Value> start{idx(b, 0)};
  start.append(nacc, zero);
  cf::BranchOp::create(b, loc, head, start);

  b.setInsertionPointToStart(head);
  Value more =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, kt, count);
  cf::CondBranchOp::create(b, loc, more, body, ValueRange{}, done,
                           ValueRange{});

  b.setInsertionPointToStart(body);
  Value g = arith::AddIOp::create(b, loc, g0, kt);
  Value s = arith::RemUIOp::create(b, loc, g, idx(b, stages));
  Value round = arith::DivUIOp::create(b, loc, g, idx(b, stages));
  Value parity = arith::IndexCastOp::create(
      b, loc, b.getI1Type(), arith::AndIOp::create(b, loc, round, idx(b, 1)));
  nvgpu::MBarrierTryWaitParityOp::create(b, loc, ctx.barriers, parity, ticks,
                                         s);
  Value s64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), s);
  // Descriptors count 16 bytes: a stage is aBytes / 16 further, and each
  // wgmma moves 32 bytes along K.
  Value dA = arith::AddIOp::create(
      b, loc, descA0, arith::MulIOp::create(b, loc, s64, i64(b, aBytes >> 4)));
  Value dB = arith::AddIOp::create(
      b, loc, descB0, arith::MulIOp::create(b, loc, s64, i64(b, bBytes >> 4)));
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  SmallVector<Value> descA{dA}, descB{dB};
  for (int kk = 1; kk < steps; ++kk) {
    descA.push_back(arith::AddIOp::create(b, loc, dA, i64(b, 2 * kk)));
    descB.push_back(arith::AddIOp::create(b, loc, dB, i64(b, 2 * kk)));
  }
  SmallVector<Value> next = buildWgmmaTile(b, loc, c, accs, descA, descB);
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, b.getI64IntegerAttr(1));
  // The group before this one has retired: release the stage it read.
  Value notFirst =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, kt, idx(b, 0));
  Value release = arith::AndIOp::create(b, loc, notFirst, releaser);
  scf::IfOp::create(b, loc, release, [&](OpBuilder &rb, Location l) {
    Value prev = arith::RemUIOp::create(
        rb, l, arith::AddIOp::create(rb, l, g, idx(rb, stages - 1)),
        idx(rb, stages));
    Value empty = arith::AddIOp::create(rb, l, prev, idx(rb, stages));
    nvgpu::MBarrierArriveOp::create(rb, l, nvgpu::MBarrierTokenType::get(mctx),
                                    ctx.barriers, empty);
    scf::YieldOp::create(rb, l);
  });
  SmallVector<Value> back{
      arith::AddIOp::create(b, loc, kt, idx(b, 1)).getResult()};
  back.append(next.begin(), next.end());
  auto branch = cf::BranchOp::create(b, loc, head, back);
  auto unroll = LLVM::LoopUnrollAttr::get(mctx, b.getBoolAttr(true), {}, {}, {},
                                          {}, {}, {});
  branch->setAttr("loop_annotation", LLVM::LoopAnnotationAttr::get(
                                         mctx, {}, {}, {}, unroll, {}, {}, {},
                                         {}, {}, {}, {}, {}, {}, {}, {}));

  b.setInsertionPointToStart(done);
  scf::YieldOp::create(b, loc, accs);
  return SmallVector<Value>(region.getResults());
}

/// With `tmaStore`: the warpgroup's 64 x BN results (`pairs[j][h]`: row
/// 16 w + l / 4 + 8 h, columns 8 j + 2 (l % 4) + 0, 1 of lane l of warp w)
/// go to its shared buffer up to 128 columns at a time, in 64 x 64 boxes of
/// 128-byte rows whose 16-byte chunks are swizzled (chunk ^ row % 8: a
/// warp's eight rows of one chunk fall in distinct banks), and its first
/// thread stores the boxes through TMA. Before each fill that thread waits
/// until the previous stores have read the buffer; the warpgroup meets on
/// its named barrier (1 + consumer) around the fill, the writes fenced for
/// the async proxy.
void storeThroughTma(OpBuilder &b, Location loc, const GemmConsumerContext &ctx,
                     const GemmOrigin &origin, Value consumer,
                     ArrayRef<std::array<Value, 2>> pairs) {
  const GemmKernelConfig &c = ctx.config;
  MLIRContext *mctx = b.getContext();
  auto idx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto i32 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  };
  auto toI64 = [&](Value v) -> Value {
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), v);
  };
  auto toI32 = [&](Value v) -> Value {
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), v);
  };
  const int64_t cols = gemmStoreColumns(c), bytes = gemmStoreBufferBytes(c);
  auto shared = LLVM::LLVMPointerType::get(mctx, 3);
  Value buffer = arith::AddIOp::create(
      b, loc, ctx.aligned,
      arith::AddIOp::create(
          b, loc, idx(gemmStoreBufferOffset(c)),
          arith::MulIOp::create(b, loc, consumer, idx(bytes))));
  Value warp = arith::DivUIOp::create(b, loc, ctx.warpgroupThread, idx(32));
  Value lane = arith::RemUIOp::create(b, loc, ctx.warpgroupThread, idx(32));
  Value quad = arith::DivUIOp::create(b, loc, lane, idx(4)); // = row % 8
  // Row 16 w + l / 4 (+ 8) of the buffer, word l % 4 of its 16-byte chunk.
  Value rowByte[2];
  rowByte[0] = arith::AddIOp::create(
      b, loc,
      arith::AddIOp::create(
          b, loc,
          arith::MulIOp::create(
              b, loc,
              arith::AddIOp::create(
                  b, loc, arith::MulIOp::create(b, loc, warp, idx(16)), quad),
              idx(128)),
          arith::MulIOp::create(
              b, loc, arith::RemUIOp::create(b, loc, lane, idx(4)), idx(4))),
      buffer);
  rowByte[1] = arith::AddIOp::create(b, loc, rowByte[0], idx(8 * 128));
  Value swizzle = arith::MulIOp::create(b, loc, quad, idx(16));
  Value leader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       ctx.warpgroupThread, idx(0));
  Value barrierId = toI32(arith::AddIOp::create(b, loc, consumer, idx(1)));
  Value threads = i32(128);
  auto meet = [&] {
    NVVM::BarrierOp::create(b, loc, Type(), barrierId, threads,
                            NVVM::BarrierReductionAttr(), Value());
  };
  auto ifLeader = [&](function_ref<void(OpBuilder &, Location)> then) {
    scf::IfOp::create(b, loc, leader, [&](OpBuilder &tb, Location l) {
      then(tb, l);
      scf::YieldOp::create(tb, l);
    });
  };
  Value row = toI32(arith::AddIOp::create(
      b, loc, origin.m0, arith::MulIOp::create(b, loc, consumer, idx(64))));
  for (int64_t f = 0; f < c.bn / cols; ++f) {
    ifLeader([&](OpBuilder &tb, Location l) {
      NVVM::CpAsyncBulkWaitGroupOp::create(tb, l, 0, tb.getUnitAttr());
    });
    meet();
    for (int64_t jj = 0; jj < cols / 8; ++jj) {
      const int64_t j = f * (cols / 8) + jj;
      // Box jj / 8, chunk jj % 8 of the row, swizzled.
      Value chunk = arith::XOrIOp::create(b, loc, idx(16 * (jj % 8)), swizzle);
      for (int h = 0; h < 2; ++h) {
        Value at = arith::AddIOp::create(
            b, loc, rowByte[h],
            arith::AddIOp::create(b, loc, chunk, idx(64 * 128 * (jj / 8))));
        Value ptr = LLVM::IntToPtrOp::create(b, loc, shared, toI64(at));
        LLVM::StoreOp::create(b, loc, pairs[j][h], ptr, 4);
      }
    }
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(mctx, NVVM::SharedSpace::shared_cta));
    meet();
    ifLeader([&](OpBuilder &tb, Location l) {
      for (int64_t box = 0; box < cols / 64; ++box) {
        Value src = LLVM::IntToPtrOp::create(
            tb, l, shared,
            toI64(arith::AddIOp::create(tb, l, buffer, idx(box * 64 * 128))));
        Value col = toI32(
            arith::AddIOp::create(tb, l, origin.n0, idx(f * cols + box * 64)));
        NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(
            tb, l, ctx.c, src, ValueRange{col, row}, Value(),
            NVVM::TMAStoreMode::TILE, Value());
      }
      NVVM::CpAsyncBulkCommitGroupOp::create(tb, l);
    });
  }
}

/// Converts and stores the accumulators: (warp w, lane l) holds row 16 w +
/// l / 4 (+ 8), columns 8 j + 2 (l % 4) (+ 1) of its warpgroup's 64 rows.
void epilogue(OpBuilder &b, Location loc, const GemmConsumerContext &ctx,
              const GemmOrigin &origin, Value consumer, ArrayRef<Value> accs) {
  const GemmKernelConfig &c = ctx.config;
  auto idx = [&](OpBuilder &ib, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(ib, loc, v);
  };
  auto toI64 = [&](Value v) -> Value {
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), v);
  };
  Type out = gemmElementType(b, c.outputType);
  const bool narrow = !out.isF32();
  const unsigned storeAlign = narrow ? 4 : 8;
  Value warp = arith::DivUIOp::create(b, loc, ctx.warpgroupThread, idx(b, 32));
  Value lane = arith::RemUIOp::create(b, loc, ctx.warpgroupThread, idx(b, 32));
  Value warpRow = arith::MulIOp::create(b, loc, warp, idx(b, 16));
  Value laneRow = arith::DivUIOp::create(b, loc, lane, idx(b, 4));
  Value laneCol = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, lane, idx(b, 4)), idx(b, 2));
  Value row0 = arith::AddIOp::create(
      b, loc,
      arith::AddIOp::create(
          b, loc,
          arith::AddIOp::create(
              b, loc, origin.m0,
              arith::MulIOp::create(b, loc, consumer, idx(b, 64))),
          warpRow),
      laneRow);
  Value row1 = arith::AddIOp::create(b, loc, row0, idx(b, 8));
  Value col = arith::AddIOp::create(b, loc, origin.n0, laneCol);
  Value rowOk[2] = {
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row0, ctx.m),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row1, ctx.m)};
  auto global = LLVM::LLVMPointerType::get(b.getContext(), 1);
  Value col64 = toI64(col);
  Value rowPtr[2];
  for (int h = 0; h < 2; ++h) {
    Value offset = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, toI64(h ? row1 : row0), ctx.ldc),
        col64);
    rowPtr[h] =
        LLVM::GEPOp::create(b, loc, global, out, ctx.c, ValueRange{offset});
  }
  auto pair = VectorType::get({2}, b.getF32Type());
  Value poison = LLVM::PoisonOp::create(b, loc, pair);
  Value lanes[2] = {
      LLVM::ConstantOp::create(b, loc, b.getI32Type(), b.getI32IntegerAttr(0)),
      LLVM::ConstantOp::create(b, loc, b.getI32Type(), b.getI32IntegerAttr(1))};
  // The stored pair (row h, columns 8 j + 2 (l % 4) + 0, 1) of c's dtype.
  // An epilogue sees a column as one value for both rows (its loads are
  // remembered by value).
  SmallVector<std::array<Value, 2>> cols;
  if (ctx.epilogue)
    for (int j = 0; j < c.bn / 8; ++j)
      cols.push_back({arith::AddIOp::create(b, loc, col, idx(b, 8 * j)),
                      arith::AddIOp::create(b, loc, col, idx(b, 8 * j + 1))});
  auto pairAt = [&](int j, int h) -> Value {
    const int e = 4 * j + 2 * h;
    if (ctx.epilogue) {
      // The author's epilogue, element by element.
      Value v = LLVM::PoisonOp::create(b, loc, VectorType::get({2}, out));
      for (int i = 0; i < 2; ++i) {
        Value x =
            ctx.epilogue(b, loc, accs[e + i], h ? row1 : row0, cols[j][i]);
        v = LLVM::InsertElementOp::create(b, loc, v, x, lanes[i]);
      }
      return v;
    }
    Value v = LLVM::InsertElementOp::create(b, loc, poison, accs[e], lanes[0]);
    v = LLVM::InsertElementOp::create(b, loc, v, accs[e + 1], lanes[1]);
    return narrow
               ? LLVM::FPTruncOp::create(b, loc, VectorType::get({2}, out), v)
                     .getResult()
               : v;
  };
  // An epilogue's results come before the first store: its loads of the
  // author's vectors then precede every store to c, which LLVM may not
  // move them past (c could alias them), and are in flight together.
  SmallVector<std::array<Value, 2>> pairs;
  if (ctx.epilogue || c.tmaStore)
    for (int j = 0; j < c.bn / 8; ++j)
      pairs.push_back({pairAt(j, 0), pairAt(j, 1)});
  if (c.tmaStore)
    return storeThroughTma(b, loc, ctx, origin, consumer, pairs);
  for (int j = 0; j < c.bn / 8; ++j) {
    Value values[2];
    for (int h = 0; h < 2; ++h)
      values[h] = ctx.epilogue ? pairs[j][h] : pairAt(j, h);
    Value offset = arith::ConstantIntOp::create(b, loc, b.getI64Type(), 8 * j);
    Value colOk;
    if (c.checkBounds)
      colOk = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ult,
          arith::AddIOp::create(b, loc, col, idx(b, 8 * j)), ctx.n);
    for (int h = 0; h < 2; ++h) {
      auto store = [&](OpBuilder &sb, Location l) {
        Value at = LLVM::GEPOp::create(sb, l, global, out, rowPtr[h],
                                       ValueRange{offset});
        LLVM::StoreOp::create(sb, l, values[h], at, storeAlign);
      };
      if (!c.checkBounds) {
        store(b, loc);
        continue;
      }
      Value ok = arith::AndIOp::create(b, loc, rowOk[h], colOk);
      scf::IfOp::create(b, loc, ok, [&](OpBuilder &sb, Location l) {
        store(sb, l);
        scf::YieldOp::create(sb, l);
      });
    }
  }
}

} // namespace

void mlir::tile::buildGemmConsumer(OpBuilder &b, Location loc,
                                   const GemmConsumerContext &ctx) {
  const GemmKernelConfig &c = ctx.config;
  const int64_t elt = gemmInputBytes(c);
  auto idx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto i64 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  };
  NVVM::SetMaxRegisterOp::create(
      b, loc, b.getI32IntegerAttr(232),
      NVVM::SetMaxRegisterActionAttr::get(
          b.getContext(), NVVM::SetMaxRegisterAction::increase));
  // Consumer 0 or 1: rows 64 cw .. 64 cw + 63 of A's stage.
  Value consumer = arith::SubIOp::create(b, loc, ctx.warpgroup, idx(1));
  Value aligned =
      arith::IndexCastOp::create(b, loc, b.getI64Type(), ctx.aligned);
  Value rowsA = arith::IndexCastOp::create(
      b, loc, b.getI64Type(),
      arith::MulIOp::create(b, loc, consumer, idx(64 * c.bk * elt)));
  Value baseA = arith::AddIOp::create(b, loc, aligned, rowsA);
  Value baseB = arith::AddIOp::create(
      b, loc, aligned, i64(static_cast<int64_t>(c.stages) * 128 * c.bk * elt));
  Value descA0 = descriptor(b, loc, baseA), descB0 = descriptor(b, loc, baseB);
  Value lane = arith::RemUIOp::create(b, loc, ctx.warpgroupThread, idx(32));
  Value releaser =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, idx(0));
  scf::ForOp::create(
      b, loc, ctx.firstTile, ctx.tiles, ctx.tileStride, ValueRange{idx(0)},
      [&](OpBuilder &tb, Location tl, Value tile, ValueRange done) {
        GemmOrigin o = ctx.origin(tb, tile);
        SmallVector<Value> accs =
            mainLoop(tb, tl, ctx, descA0, descB0, releaser, done[0], o.count);
        NVVM::WgmmaWaitGroupSyncOp::create(tb, tl, tb.getI64IntegerAttr(0));
        // Every group has retired: release the stage of the last K tile.
        Value end = arith::AddIOp::create(tb, tl, done[0], o.count);
        Value any = arith::CmpIOp::create(tb, tl, arith::CmpIPredicate::ugt,
                                          o.count, idx(0));
        Value release = arith::AndIOp::create(tb, tl, any, releaser);
        scf::IfOp::create(tb, tl, release, [&](OpBuilder &rb, Location l) {
          Value last = arith::RemUIOp::create(
              rb, l, arith::AddIOp::create(rb, l, end, idx(c.stages - 1)),
              idx(c.stages));
          nvgpu::MBarrierArriveOp::create(
              rb, l, nvgpu::MBarrierTokenType::get(rb.getContext()),
              ctx.barriers, arith::AddIOp::create(rb, l, last, idx(c.stages)));
          scf::YieldOp::create(rb, l);
        });
        epilogue(tb, tl, ctx, o, consumer, accs);
        scf::YieldOp::create(tb, tl, end);
      });
  if (c.tmaStore) {
    // The block's last stores have completed before it exits.
    Value leader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         ctx.warpgroupThread, idx(0));
    scf::IfOp::create(b, loc, leader, [&](OpBuilder &tb, Location l) {
      NVVM::CpAsyncBulkWaitGroupOp::create(tb, l, 0, UnitAttr());
      scf::YieldOp::create(tb, l);
    });
  }
}
