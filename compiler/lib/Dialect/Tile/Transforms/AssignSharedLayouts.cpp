//===- AssignSharedLayouts.cpp - Shared tiles' layouts from their users ---===//
//
// Each shared tile gets the layout its readers want, as attributes of its
// tile.alloc_shared: today the row padding of mma.sync operands (row_pad),
// which convert-tile-to-gpu allocates.
//
//===----------------------------------------------------------------------===//
#include "tilejit/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

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
/// reads a pair at (g, 2 i) for rows g < 8 and i < 4. Rows of K + pad = 8
/// (mod 16) elements (K is a multiple of the K step, 8 or 16) start 4 banks
/// apart times an odd number for a 16-bit tile (4-byte pairs: the 8 rows
/// on distinct banks) and 8 banks apart times an odd number for an f32
/// tile (8-byte pairs: a half-warp's 4 rows on 32 banks); both stay 16-byte
/// aligned. K a multiple of 16 takes 8 elements (16 or 32 bytes), K = 8
/// (mod 16) none.
int64_t mmaRowPad(AllocSharedOp tile) {
  if (!feedsGemm(tile.getResult()))
    return 0;
  const int64_t k = tile.getType().getShape().back();
  const unsigned bits = tile.getType().getElementTypeBitWidth();
  // Not an mma.sync operand type or K step: the lowering reports the gemm.
  if ((bits != 16 && bits != 32) || k % 8 != 0)
    return 0;
  return k % 16 == 0 ? 8 : 0;
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
