//===- LowerPipelined.cpp - tile.pipelined to a multi-buffered scf.for ---===//
//
// Checks each loop (its copies, their tiles and origins), gives every copied
// tile one buffer a stage, issues the first stages' copies before the loop
// and each later step's copies stages - 1 steps ahead inside it, with the
// cp.async group waits and barriers that order them, or, where every copy
// of the loop can be one TMA copy, the mbarriers of PipelinedTma.cpp (the
// pass's description in Passes.td says which).
//
//===----------------------------------------------------------------------===//
#include "PipelinedTma.h"

#include "tilejit/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tile {
#define GEN_PASS_DEF_LOWERPIPELINED
#include "tilejit/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {

/// A loop's copies and what issuing them ahead needs.
struct Plan {
  PipelinedOp loop;
  SmallVector<CopyOp> copies;
  /// The body's ops the copies' origins are computed by, in body order.
  llvm::SetVector<Operation *> originOps;
  /// Each copied tile and its S-buffer replacement (filled when lowering).
  SmallVector<AllocSharedOp> tiles;
};

InFlightDiagnostic fail(Operation *op, const Twine &what) {
  return op->emitOpError() << "cannot be pipelined: " << what;
}

/// Adds the body ops that `v` is computed by to `ops`; fails where one is
/// not free of side effects or `v` comes from a loop-carried value.
LogicalResult collectOrigin(Value v, Block &body, CopyOp copy,
                            llvm::SetVector<Operation *> &ops) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (arg.getOwner() == &body && arg.getArgNumber() != 0)
      return fail(copy, "its origin depends on a loop-carried value; it may "
                        "use only the step and values from outside the loop");
    return success();
  }
  Operation *op = v.getDefiningOp();
  if (op->getBlock() != &body)
    return success();
  if (ops.contains(op))
    return success();
  if (op->getNumRegions() != 0 || !isMemoryEffectFree(op))
    return fail(copy, "its origin is computed by '")
           << op->getName() << "', which is not free of side effects; it may "
           << "use only the step and values from outside the loop";
  for (Value operand : op->getOperands())
    if (failed(collectOrigin(operand, body, copy, ops)))
      return failure();
  ops.insert(op);
  return success();
}

FailureOr<Plan> check(PipelinedOp loop) {
  Plan plan{loop, {}, {}, {}};
  Block &body = loop.getBody().front();
  if (loop->getParentOfType<PipelinedOp>()) {
    fail(loop, "it lies inside another pipelined loop");
    return failure();
  }
  WalkResult walk = loop.getBody().walk([&](CopyOp copy) {
    if (copy->getBlock() != &body) {
      fail(copy, "it lies in a branch or loop inside the pipelined body; "
                 "only copies at the body's top level run ahead");
      return WalkResult::interrupt();
    }
    plan.copies.push_back(copy);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  for (CopyOp copy : plan.copies) {
    auto tile = copy.getDest().getDefiningOp<AllocSharedOp>();
    if (!tile || loop->isAncestor(tile)) {
      fail(copy, "its tile must come from a tile.alloc_shared outside the "
                 "loop");
      return failure();
    }
    if (llvm::is_contained(plan.tiles, tile)) {
      fail(copy, "another copy of the loop fills the same tile");
      return failure();
    }
    for (Operation *user : tile->getUsers()) {
      if (!loop->isAncestor(user)) {
        fail(user, "it uses a tile that a pipelined loop fills stages "
                   "ahead; such a tile lives only in its loop")
                .attachNote(loop.getLoc())
            << "the loop";
        return failure();
      }
      auto store = dyn_cast<StoreOp>(user);
      if (user != copy.getOperation() &&
          (isa<CopyOp>(user) || (store && store.getDest() == copy.getDest()))) {
        fail(user, "it writes a tile that the loop's copy fills stages "
                   "ahead");
        return failure();
      }
    }
    MemRefType type = tile.getType();
    const int64_t bytes =
        type.getNumElements() * type.getElementTypeBitWidth() / 8;
    if (loop.getStages() > 1 && bytes % 16 != 0) {
      fail(copy, "its tile holds ")
          << bytes
          << " bytes; a tile with one buffer a stage must hold a multiple "
             "of 16 bytes";
      return failure();
    }
    for (Value index : copy.getIndices())
      if (failed(collectOrigin(index, body, copy, plan.originOps)))
        return failure();
    plan.tiles.push_back(tile);
  }
  // Body order, so that each op's operands are cloned before it.
  SmallVector<Operation *> ordered(plan.originOps.begin(),
                                   plan.originOps.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  plan.originOps = llvm::SetVector<Operation *>(ordered.begin(), ordered.end());
  return plan;
}

/// Buffer `slot` of an S-buffer `buffers` (S x the tile's shape) as a tile.
Value slotView(OpBuilder &b, Location loc, Value buffers, Value slot) {
  auto type = cast<MemRefType>(buffers.getType());
  ArrayRef<int64_t> shape = type.getShape().drop_front();
  SmallVector<OpFoldResult> offsets{slot}, sizes{b.getIndexAttr(1)},
      strides(type.getRank(), b.getIndexAttr(1));
  for (int64_t size : shape) {
    offsets.push_back(b.getIndexAttr(0));
    sizes.push_back(b.getIndexAttr(size));
  }
  MemRefType view = memref::SubViewOp::inferRankReducedResultType(
      shape, type, offsets, sizes, strides);
  return memref::SubViewOp::create(b, loc, view, buffers, offsets, sizes,
                                   strides);
}

void lower(Plan &plan) {
  PipelinedOp loop = plan.loop;
  Location loc = loop.getLoc();
  Block &body = loop.getBody().front();
  Value step = body.getArgument(0);
  const int64_t stages = loop.getStages();

  // TMA where every copy can be one, else every thread's cp.async pieces.
  const bool useTma =
      llvm::all_of(llvm::zip(plan.copies, plan.tiles), [&](auto pair) {
        return isTmaCopy(std::get<0>(pair), std::get<1>(pair), stages);
      });

  // One buffer a stage for each copied tile.
  SmallVector<Value> buffers;
  for (AllocSharedOp tile : plan.tiles) {
    OpBuilder at(tile);
    MemRefType type = tile.getType();
    SmallVector<int64_t> shape{stages};
    llvm::append_range(shape, type.getShape());
    auto buffer = AllocSharedOp::create(
        at, tile.getLoc(),
        MemRefType::get(shape, type.getElementType(),
                        MemRefLayoutAttrInterface{}, type.getMemorySpace()),
        tile.getRowPadAttr());
    if (useTma)
      buffer->setAttr(kSharedAlignAttr, at.getI64IntegerAttr(128));
    buffers.push_back(buffer);
  }

  OpBuilder b(loop);
  std::optional<TmaPipeline> tma;
  if (useTma)
    tma = setUpTma(b, loop, plan.copies, stages);

  // The copies of step `s` into buffer `slot`, issued (not awaited).
  auto issue = [&](OpBuilder &b, Value s, Value slot) {
    auto build = [&](OpBuilder &ib) {
      IRMapping map;
      map.map(step, s);
      for (Operation *op : plan.originOps)
        ib.clone(*op, map);
      TmaStep copies;
      for (auto [copy, buffer] : llvm::zip(plan.copies, buffers)) {
        SmallVector<Value> indices;
        for (Value index : copy.getIndices())
          indices.push_back(map.lookupOrDefault(index));
        copies.origins.push_back(indices);
        copies.dests.push_back(slotView(ib, copy.getLoc(), buffer, slot));
      }
      return copies;
    };
    if (tma) {
      issueTma(b, loc, *tma, slot, build);
      return;
    }
    TmaStep copies = build(b);
    for (auto [copy, origin, dest] :
         llvm::zip(plan.copies, copies.origins, copies.dests))
      CopyOp::create(b, copy.getLoc(), copy.getSource(), origin, dest,
                     /*async=*/true);
  };
  auto constant = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto ifBelow = [&](OpBuilder &b, Value s, Value count,
                     function_ref<void(OpBuilder &)> then) {
    Value below =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, s, count);
    scf::IfOp::create(b, loc, below, [&](OpBuilder &tb, Location l) {
      then(tb);
      scf::YieldOp::create(tb, l);
    });
  };

  Value count = loop.getCount();
  // Steps 0 .. S - 2, one group each (empty past the count).
  for (int64_t s = 0; s + 1 < stages; ++s) {
    Value sv = constant(b, s);
    ifBelow(b, sv, count, [&](OpBuilder &tb) { issue(tb, sv, sv); });
    if (!tma)
      NVVM::CpAsyncCommitGroupOp::create(b, loc);
  }
  auto forOp = scf::ForOp::create(
      b, loc, constant(b, 0), count, constant(b, 1), loop.getInits(),
      [&](OpBuilder &fb, Location l, Value k, ValueRange carried) {
        // The copies of step k + S - 1, if there is one, into its stage.
        auto issueAhead = [&] {
          Value next =
              arith::AddIOp::create(fb, l, k, constant(fb, stages - 1));
          ifBelow(fb, next, count, [&](OpBuilder &tb) {
            issue(tb, next,
                  arith::RemUIOp::create(tb, l, next, constant(tb, stages)));
          });
        };
        if (tma) {
          // Every thread has left step k - 1: its stage may be refilled
          // before step k's copies are awaited.
          gpu::BarrierOp::create(fb, l);
          issueAhead();
          waitTma(fb, l, *tma, k, stages);
        } else if (stages > 1) {
          NVVM::CpAsyncWaitGroupOp::create(fb, l, stages - 2);
          gpu::BarrierOp::create(fb, l);
          issueAhead();
          NVVM::CpAsyncCommitGroupOp::create(fb, l);
        } else {
          issue(fb, k, constant(fb, 0));
          NVVM::CpAsyncCommitGroupOp::create(fb, l);
          NVVM::CpAsyncWaitGroupOp::create(fb, l, 0);
          gpu::BarrierOp::create(fb, l);
        }
        IRMapping map;
        map.map(step, k);
        for (auto [arg, value] :
             llvm::zip(body.getArguments().drop_front(), carried))
          map.map(arg, value);
        Value slot =
            stages > 1 ? arith::RemUIOp::create(fb, l, k, constant(fb, stages))
                             .getResult()
                       : constant(fb, 0);
        for (auto [tile, buffer] : llvm::zip(plan.tiles, buffers))
          map.map(tile.getResult(), slotView(fb, l, buffer, slot));
        for (Operation &op : body.without_terminator())
          if (!isa<CopyOp>(op))
            fb.clone(op, map);
        if (stages == 1) // the next step's copy overwrites the tiles
          gpu::BarrierOp::create(fb, l);
        SmallVector<Value> next;
        for (Value v : body.getTerminator()->getOperands())
          next.push_back(map.lookupOrDefault(v));
        scf::YieldOp::create(fb, l, next);
      });
  if (tma) {
    b.setInsertionPointAfter(forOp);
    endTma(b, loc, *tma);
  }
  loop.replaceAllUsesWith(forOp.getResults());
  loop.erase();
  for (AllocSharedOp tile : plan.tiles)
    tile.erase();
}

struct LowerPipelinedPass
    : mlir::tile::impl::LowerPipelinedBase<LowerPipelinedPass> {
  void runOnOperation() override {
    SmallVector<PipelinedOp> loops;
    getOperation().walk([&](PipelinedOp loop) { loops.push_back(loop); });
    SmallVector<Plan> plans;
    for (PipelinedOp loop : loops) {
      FailureOr<Plan> plan = check(loop);
      if (failed(plan))
        return signalPassFailure();
      plans.push_back(std::move(*plan));
    }
    for (Plan &plan : plans)
      lower(plan);
  }
};

} // namespace
