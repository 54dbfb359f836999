//===- GemmKernel.cpp - The gemm kernel's function, set-up and producer --===//
//
// See GemmKernel.h for the kernel as a whole. This file builds its llvm.func
// (the tensor maps by value as grid constants), the dynamic shared memory
// realigned to 1024 bytes, the 2 x stages mbarriers (full[s] = s: the TMA
// bytes of stage s have landed; empty[s] = stages + s: the 8 consumer warps
// are done with it), and the producer warpgroup: its elected thread waits
// for a stage to be empty, expects its bytes and issues the TMA copies of
// the A and B K-tiles into it, tile after tile.
//
//===----------------------------------------------------------------------===//
#include "GemmKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tile;

namespace {

nvgpu::TensorMapDescriptorType tensorMap(OpBuilder &b, int64_t rows,
                                         int64_t cols, Type elt) {
  auto box = MemRefType::get({rows, cols}, elt, MemRefLayoutAttrInterface{},
                             b.getI64IntegerAttr(3));
  return nvgpu::TensorMapDescriptorType::get(
      b.getContext(), box, nvgpu::TensorMapSwizzleKind::SWIZZLE_128B,
      nvgpu::TensorMapL2PromoKind::L2PROMO_256B,
      nvgpu::TensorMapOOBKind::OOB_ZERO,
      nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
}

} // namespace

std::string mlir::tile::gemmTypeName(Type t) {
  if (t.isBF16())
    return "bf16";
  if (t.isF16())
    return "f16";
  if (isa<Float8E4M3FNType>(t))
    return "e4m3";
  if (isa<Float8E5M2Type>(t))
    return "e5m2";
  if (t.isF32())
    return "f32";
  return "";
}

Type mlir::tile::gemmElementType(OpBuilder &b, StringRef name) {
  if (name == "bf16")
    return b.getBF16Type();
  if (name == "f16")
    return b.getF16Type();
  if (name == "f32")
    return b.getF32Type();
  return b.getI8Type();
}

int mlir::tile::gemmInputBytes(const GemmKernelConfig &c) {
  if (c.inputType == "e4m3" || c.inputType == "e5m2")
    return 1;
  return c.inputType == "f32" ? 4 : 2;
}

int64_t mlir::tile::gemmStoreBufferOffset(const GemmKernelConfig &c) {
  return static_cast<int64_t>(c.stages) * (128 + c.bn) * c.bk *
         gemmInputBytes(c);
}

int64_t mlir::tile::gemmStoreColumns(const GemmKernelConfig &c) {
  return std::min<int64_t>(c.bn, 128);
}

int64_t mlir::tile::gemmStoreBufferBytes(const GemmKernelConfig &c) {
  return 64 * gemmStoreColumns(c) * 2; // 16-bit outputs only
}

int64_t mlir::tile::gemmSharedBytes(const GemmKernelConfig &c) {
  return gemmStoreBufferOffset(c) +
         (c.tmaStore ? 2 * gemmStoreBufferBytes(c) : 0) + 1024;
}

FailureOr<LLVM::LLVMFuncOp> mlir::tile::buildGemmKernel(
    OpBuilder &b, Location loc, const GemmKernelConfig &c,
    ArrayRef<Type> extraParams, const GemmOriginFn &origin,
    const GemmEpilogueFn &epilogue) {
  MLIRContext *ctx = b.getContext();
  const int64_t bm = 128, bk = c.bk, bn = c.bn, stages = c.stages;
  const int64_t elt = gemmInputBytes(c);
  const int64_t aBytes = bm * bk * elt, bBytes = bn * bk * elt,
                tx = aBytes + bBytes;
  Type mem = gemmElementType(b, c.inputType);
  auto tmA = tensorMap(b, bm, bk, mem), tmB = tensorMap(b, bn, bk, mem);
  auto workgroup =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto bars = nvgpu::MBarrierGroupType::get(ctx, workgroup, 2 * stages);

  // (tensor map A, tensor map B, C, M, N, K, ldc, tiles).
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto global = LLVM::LLVMPointerType::get(ctx, 1);
  Type i64 = b.getI64Type();
  SmallVector<Type> params{
      ptr, ptr, c.tmaStore ? Type(ptr) : Type(global), i64, i64, i64, i64, i64};
  params.append(extraParams.begin(), extraParams.end());
  auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), params);
  auto func = LLVM::LLVMFuncOp::create(b, loc, c.name, type);
  SmallVector<unsigned> maps{0, 1};
  if (c.tmaStore)
    maps.push_back(2);
  for (unsigned map : maps) {
    func.setArgAttr(map, "llvm.byval",
                    TypeAttr::get(LLVM::LLVMArrayType::get(i64, 16)));
    func.setArgAttr(map, "llvm.align", b.getI64IntegerAttr(64));
    func.setArgAttr(map, "nvvm.grid_constant", b.getUnitAttr());
  }
  if (!c.tmaStore) {
    func.setArgAttr(2, "llvm.noalias", b.getUnitAttr());
    func.setArgAttr(2, "llvm.align", b.getI64IntegerAttr(16));
  }
  func->setAttr("nvvm.kernel", b.getUnitAttr());
  func->setAttr("nvvm.maxntid", b.getDenseI32ArrayAttr({384, 1, 1}));
  func->setAttr("nvvm.minctasm", b.getI32IntegerAttr(1));

  Block *entry = func.addEntryBlock(b);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(entry);
  auto args = entry->getArguments();
  Value mapA =
      UnrealizedConversionCastOp::create(b, loc, tmA, args[0]).getResult(0);
  Value mapB =
      UnrealizedConversionCastOp::create(b, loc, tmB, args[1]).getResult(0);
  auto idx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  // The origin of each tile, cloned where the producer and the consumers
  // need it; a failure (reported) erases the kernel once it is built.
  bool originFailed = false;
  Value zero = idx(0);
  auto originOf = [&](OpBuilder &ob, Value tile, bool forEpilogue) {
    FailureOr<GemmOrigin> o = origin(ob, func, tile, forEpilogue);
    originFailed |= failed(o);
    return succeeded(o) ? *o : GemmOrigin{zero, zero, zero};
  };
  Value firstTile = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value tileStride = gpu::GridDimOp::create(b, loc, gpu::Dimension::x);
  Value tiles = arith::IndexCastOp::create(b, loc, b.getIndexType(), args[7]);
  Value ticks = idx(10000000);
  Value trueBit = arith::ConstantIntOp::create(b, loc, 1, 1);
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value m = arith::IndexCastOp::create(b, loc, b.getIndexType(), args[3]);
  Value n = arith::IndexCastOp::create(b, loc, b.getIndexType(), args[4]);

  // Dynamic shared memory, realigned to 1024 bytes: A's stages, then B's.
  Value dyn = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface{}, workgroup));
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, dyn);
  Value aligned = arith::AndIOp::create(
      b, loc, arith::AddIOp::create(b, loc, base, idx(1023)), idx(-1024));
  Value shift = arith::SubIOp::create(b, loc, aligned, base);

  Value barriers = nvgpu::MBarrierCreateOp::create(b, loc, bars);
  Value first =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, idx(0));
  for (int64_t s = 0; s < stages; ++s) {
    nvgpu::MBarrierInitOp::create(b, loc, barriers, idx(1), idx(s), first);
    nvgpu::MBarrierInitOp::create(b, loc, barriers, idx(8), idx(stages + s),
                                  first);
  }
  nvgpu::TmaPrefetchOp::create(b, loc, mapA, first);
  nvgpu::TmaPrefetchOp::create(b, loc, mapB, first);
  gpu::BarrierOp::create(b, loc);
  Value wg = arith::DivUIOp::create(b, loc, tid, idx(128));
  Value wgtid = arith::RemUIOp::create(b, loc, tid, idx(128));
  Value producer =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, wg, idx(0));

  auto produce = [&](OpBuilder &pb, Location l) {
    NVVM::SetMaxRegisterOp::create(
        pb, l, pb.getI32IntegerAttr(40),
        NVVM::SetMaxRegisterActionAttr::get(
            ctx, NVVM::SetMaxRegisterAction::decrease));
    Value leader =
        arith::CmpIOp::create(pb, l, arith::CmpIPredicate::eq, wgtid, idx(0));
    scf::IfOp::create(pb, l, leader, [&](OpBuilder &lb, Location ll) {
      // K-tile g of the block (counted across its tiles) goes to stage
      // g % stages in round g / stages.
      scf::ForOp::create(
          lb, ll, firstTile, tiles, tileStride, ValueRange{zero},
          [&](OpBuilder &tb, Location tl, Value tile, ValueRange done) {
            GemmOrigin o = originOf(tb, tile, false);
            scf::ForOp::create(
                tb, tl, idx(0), o.count, idx(1), ValueRange{},
                [&](OpBuilder &fb, Location fl, Value kt, ValueRange) {
                  Value g = arith::AddIOp::create(fb, fl, done[0], kt);
                  Value s = arith::RemUIOp::create(fb, fl, g, idx(stages));
                  Value round = arith::DivUIOp::create(fb, fl, g, idx(stages));
                  Value odd = arith::IndexCastOp::create(
                      fb, fl, fb.getI1Type(),
                      arith::AndIOp::create(fb, fl, round, idx(1)));
                  // The stage's previous round must be released (parity of the
                  // round before); round 0 passes at once.
                  Value parity = arith::XOrIOp::create(fb, fl, odd, trueBit);
                  Value empty = arith::AddIOp::create(fb, fl, s, idx(stages));
                  nvgpu::MBarrierTryWaitParityOp::create(fb, fl, barriers,
                                                         parity, ticks, empty);
                  nvgpu::MBarrierArriveExpectTxOp::create(fb, fl, barriers,
                                                          idx(tx), s, Value());
                  Value k0 = arith::MulIOp::create(fb, fl, kt, idx(bk));
                  Value offA = arith::AddIOp::create(
                      fb, fl, shift,
                      arith::MulIOp::create(fb, fl, s, idx(aBytes)));
                  Value offB = arith::AddIOp::create(
                      fb, fl,
                      arith::AddIOp::create(
                          fb, fl, shift,
                          arith::MulIOp::create(fb, fl, s, idx(bBytes))),
                      idx(stages * aBytes));
                  auto tile = [&](int64_t rows) {
                    return MemRefType::get({rows, bk}, mem,
                                           MemRefLayoutAttrInterface{},
                                           workgroup);
                  };
                  Value dstA = memref::ViewOp::create(fb, fl, tile(bm), dyn,
                                                      offA, ValueRange{});
                  Value dstB = memref::ViewOp::create(fb, fl, tile(bn), dyn,
                                                      offB, ValueRange{});
                  nvgpu::TmaAsyncLoadOp::create(fb, fl, dstA, barriers, mapA,
                                                ValueRange{k0, o.m0}, s,
                                                Value(), Value());
                  nvgpu::TmaAsyncLoadOp::create(fb, fl, dstB, barriers, mapB,
                                                ValueRange{k0, o.n0}, s,
                                                Value(), Value());
                  scf::YieldOp::create(fb, fl);
                });
            scf::YieldOp::create(
                tb, tl,
                arith::AddIOp::create(tb, tl, done[0], o.count).getResult());
          });
      scf::YieldOp::create(lb, ll);
    });
    scf::YieldOp::create(pb, l);
  };
  auto consume = [&](OpBuilder &cb, Location l) {
    GemmConsumerContext context{
        c,
        barriers,
        aligned,
        wgtid,
        wg,
        firstTile,
        tiles,
        tileStride,
        [&](OpBuilder &ob, Value tile) { return originOf(ob, tile, true); },
        args[2],
        m,
        n,
        args[6],
        epilogue};
    buildGemmConsumer(cb, l, context);
    scf::YieldOp::create(cb, l);
  };
  scf::IfOp::create(b, loc, producer, produce, consume);
  LLVM::ReturnOp::create(b, loc, ValueRange{});
  if (originFailed) {
    func.erase();
    return failure();
  }
  return func;
}
