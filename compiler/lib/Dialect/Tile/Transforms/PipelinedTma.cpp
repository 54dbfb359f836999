//===- PipelinedTma.cpp - A pipelined loop's copies as TMA copies --------===//
//
// See PipelinedTma.h. A stage's mbarrier completes a phase when its thread
// has arrived (count 1, with the bytes it expects) and the TMA copies have
// brought those bytes; step k waits for phase k / S of barrier k mod S.
// tile-lower-pipelined keeps its block barrier a step: the issuing thread
// refills a stage only after every thread has left the step that read it.
// A loop that may run again (inside another loop or branch) ends with a
// barrier and the mbarriers' invalidation, so that its next run initialises
// them afresh (PTX: an mbarrier is re-initialised only once invalid).
//
//===----------------------------------------------------------------------===//
#include "PipelinedTma.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <fmt/format.h>

using namespace mlir;
using namespace mlir::tile;

namespace {

int64_t bytesOf(MemRefType type) {
  return type.getNumElements() * type.getElementTypeBitWidth() / 8;
}

/// The ABI's name of a TMA element type (KernelAbi binds by its size);
/// empty for one TMA does not copy here.
std::string dtypeName(Type t) {
  if (t.isBF16())
    return "bf16";
  if (t.isF16())
    return "f16";
  if (t.isF32())
    return "f32";
  if (t.isInteger(32))
    return "i32";
  if (t.isInteger(8))
    return "i8";
  if (isa<Float8E4M3FNType>(t))
    return "e4m3";
  if (isa<Float8E5M2Type>(t))
    return "e5m2";
  return "";
}

/// The kernel argument `v` is, or null.
BlockArgument kernelArgument(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || !arg.getOwner()->isEntryBlock() ||
      !isa<func::FuncOp>(arg.getOwner()->getParentOp()))
    return {};
  return arg;
}

} // namespace

bool mlir::tile::isTmaCopy(CopyOp copy, AllocSharedOp tile, int64_t stages) {
  BlockArgument arg = kernelArgument(copy.getSource());
  if (stages < 2 || !arg)
    return false;
  auto func = cast<func::FuncOp>(arg.getOwner()->getParentOp());
  auto align = func.getArgAttrOfType<IntegerAttr>(
      arg.getArgNumber(), TileDialect::getAlignAttrName());
  auto source = cast<MemRefType>(arg.getType());
  MemRefType type = tile.getType();
  ArrayRef<int64_t> shape = type.getShape();
  if (func.getArgAttr(arg.getArgNumber(), TileDialect::getRepeatsAttrName()))
    return false;
  if (!source.isLastDimUnitStride() || !align || align.getInt() < 16 ||
      dtypeName(type.getElementType()).empty() || tile.getRowPad() ||
      type.getRank() != source.getRank() || type.getRank() > 5 ||
      bytesOf(type) % 128 != 0 ||
      (shape.back() * type.getElementTypeBitWidth() / 8) % 16 != 0)
    return false;
  if (llvm::any_of(shape, [](int64_t side) { return side < 1 || side > 256; }))
    return false;
  return llvm::none_of(tile->getUsers(),
                       [](Operation *user) { return isa<GemmOp>(user); });
}

TmaPipeline mlir::tile::setUpTma(OpBuilder &b, PipelinedOp loop,
                                 ArrayRef<CopyOp> copies, int64_t stages) {
  MLIRContext *ctx = b.getContext();
  Location loc = loop.getLoc();
  auto func = loop->getParentOfType<func::FuncOp>();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  OpBuilder entry = OpBuilder::atBlockBegin(&func.getBody().front());
  SmallVector<Attribute> lines;
  if (auto old = func->getAttrOfType<ArrayAttr>(kAbiExtraAttr))
    lines.assign(old.begin(), old.end());
  int64_t count = 0;
  if (auto old = func->getAttrOfType<IntegerAttr>(kTensorMapsAttr))
    count = old.getInt();

  TmaPipeline tma;
  // A tensor map a (source, box): copies of one tensor with one box share it.
  SmallVector<std::tuple<Value, MemRefType, Value>> made;
  for (CopyOp copy : copies) {
    auto tile = cast<MemRefType>(copy.getDest().getType());
    tma.bytes += bytesOf(tile);
    Value map;
    for (auto &[source, box, known] : made)
      if (source == copy.getSource() && box == tile)
        map = known;
    if (!map) {
      auto arg = cast<BlockArgument>(copy.getSource());
      auto name =
          func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "tile.name");
      std::string line =
          fmt::format("arg tensor_map {} {} {}", name ? name.str() : "?",
                      dtypeName(tile.getElementType()), tile.getRank());
      for (int64_t side : tile.getShape())
        line += fmt::format(" {}", side);
      lines.push_back(StringAttr::get(ctx, line + " swizzle 0"));
      const unsigned index = func.getNumArguments();
      (void)func.insertArgument(index, ptr, DictionaryAttr::get(ctx), loc);
      auto box =
          MemRefType::get(tile.getShape(), tile.getElementType(),
                          MemRefLayoutAttrInterface{}, b.getI64IntegerAttr(3));
      auto type = nvgpu::TensorMapDescriptorType::get(
          ctx, box, nvgpu::TensorMapSwizzleKind::SWIZZLE_NONE,
          nvgpu::TensorMapL2PromoKind::L2PROMO_256B,
          nvgpu::TensorMapOOBKind::OOB_ZERO,
          nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
      map = UnrealizedConversionCastOp::create(entry, loc, type,
                                               func.getArgument(index))
                .getResult(0);
      made.push_back({copy.getSource(), tile, map});
      ++count;
    }
    tma.maps.push_back(map);
  }
  func->setAttr(kAbiExtraAttr, ArrayAttr::get(ctx, lines));
  func->setAttr(kTensorMapsAttr, b.getI64IntegerAttr(count));

  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  tma.stages = stages;
  tma.nested = loop->getParentOp() != func.getOperation();
  auto workgroup =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  tma.barriers = nvgpu::MBarrierCreateOp::create(
      b, loc, nvgpu::MBarrierGroupType::get(ctx, workgroup, stages));
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  tma.leader =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, index(0));
  for (int64_t s = 0; s < stages; ++s)
    nvgpu::MBarrierInitOp::create(b, loc, tma.barriers, index(1), index(s),
                                  tma.leader);
  for (auto &[source, box, map] : made)
    nvgpu::TmaPrefetchOp::create(b, loc, map, tma.leader);
  gpu::BarrierOp::create(b, loc);
  return tma;
}

void mlir::tile::issueTma(OpBuilder &b, Location loc, const TmaPipeline &tma,
                          Value slot, function_ref<TmaStep(OpBuilder &)> step) {
  scf::IfOp::create(b, loc, tma.leader, [&](OpBuilder &lb, Location l) {
    TmaStep copies = step(lb);
    Value bytes = arith::ConstantIndexOp::create(lb, l, tma.bytes);
    nvgpu::MBarrierArriveExpectTxOp::create(lb, l, tma.barriers, bytes, slot,
                                            Value());
    for (auto [origin, dest, map] :
         llvm::zip(copies.origins, copies.dests, tma.maps)) {
      // TMA's coordinates: the innermost dimension first.
      SmallVector<Value> coordinates(llvm::reverse(origin));
      nvgpu::TmaAsyncLoadOp::create(lb, l, dest, tma.barriers, map, coordinates,
                                    slot, Value(), Value());
    }
    scf::YieldOp::create(lb, l);
  });
}

void mlir::tile::endTma(OpBuilder &b, Location loc, const TmaPipeline &tma) {
  if (!tma.nested)
    return;
  gpu::BarrierOp::create(b, loc);
  scf::IfOp::create(b, loc, tma.leader, [&](OpBuilder &lb, Location l) {
    auto shared = LLVM::LLVMPointerType::get(lb.getContext(), 3);
    for (int64_t s = 0; s < tma.stages; ++s) {
      Value at = nvgpu::MBarrierGetOp::create(
          lb, l, lb.getI64Type(), tma.barriers,
          arith::ConstantIndexOp::create(lb, l, s));
      NVVM::MBarrierInvalOp::create(
          lb, l, LLVM::IntToPtrOp::create(lb, l, shared, at));
    }
    scf::YieldOp::create(lb, l);
  });
}

void mlir::tile::waitTma(OpBuilder &b, Location loc, const TmaPipeline &tma,
                         Value step, int64_t stages) {
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value slot = arith::RemUIOp::create(b, loc, step, index(stages));
  Value round = arith::DivUIOp::create(b, loc, step, index(stages));
  Value parity = arith::IndexCastOp::create(
      b, loc, b.getI1Type(), arith::AndIOp::create(b, loc, round, index(1)));
  nvgpu::MBarrierTryWaitParityOp::create(b, loc, tma.barriers, parity,
                                         index(10000000), slot);
}
