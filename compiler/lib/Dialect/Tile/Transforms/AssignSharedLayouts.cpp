//===- AssignSharedLayouts.cpp - Shared tiles' layouts from their users ---===//
//
// Each shared tile gets the layout its readers want, as attributes of its
// tile.alloc_shared: today the row padding of mma.sync operands (row_pad),
// which convert-tile-to-gpu allocates.
//
//===----------------------------------------------------------------------===//
#include "tilejit/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <functional>

namespace mlir::tile {
#define GEN_PASS_DEF_ASSIGNSHAREDLAYOUTS
#include "tilejit/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {

/// Whether `tile`, or a view of it (a pipelined loop's stage buffers),
/// is an operand of a tile.gemm.
bool feedsGemm(Value tile) {
  return llvm::any_of(tile.getUsers(), [&](Operation *user) {
    if (auto view = dyn_cast<memref::SubViewOp>(user))
      return view.getSource() == tile && feedsGemm(view.getResult());
    return isa<GemmOp>(user);
  });
}

/// Elements added to each row of an mma.sync operand: a fragment load
/// reads a pair at (g, 2 i) for rows g < 8 and i < 4; row bytes are
/// multiples of 32 (K is a multiple of the K step), so rows 16 bytes
/// longer start 4 banks apart (4-byte pairs of a 16-bit tile), 32 bytes
/// longer 8 banks apart (8-byte pairs of an f32 tile: a half-warp's loads
/// hit 32 banks).
int64_t mmaRowPad(AllocSharedOp tile) {
  const int64_t bytes = tile.getType().getElementTypeBitWidth() / 8;
  if (bytes == 0 || !feedsGemm(tile.getResult()))
    return 0;
  return (bytes == 4 ? 32 : 16) / bytes;
}

struct AssignSharedLayoutsPass
    : mlir::tile::impl::AssignSharedLayoutsBase<AssignSharedLayoutsPass> {
  void runOnOperation() override {
    getOperation().walk([&](AllocSharedOp tile) {
      if (int64_t pad = mmaRowPad(tile))
        tile.setRowPadAttr(
            IntegerAttr::get(IntegerType::get(tile.getContext(), 64), pad));
    });
  }
};

} // namespace
