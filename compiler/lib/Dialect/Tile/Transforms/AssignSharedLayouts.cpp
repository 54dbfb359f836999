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

/// How a tile.gemm reads `tile`, or a view of it (a pipelined loop's stage
/// buffers): not at all, as given (K the rows' dimension) or transposed (K
/// the rows).
enum class GemmUse { none, rows, transposed };
GemmUse gemmUse(Value tile) {
  for (Operation *user : tile.getUsers()) {
    if (auto view = dyn_cast<memref::SubViewOp>(user)) {
      if (view.getSource() != tile)
        continue;
      if (GemmUse use = gemmUse(view.getResult()); use != GemmUse::none)
        return use;
    }
    if (auto gemm = dyn_cast<GemmOp>(user))
      return (gemm.getA() == tile ? gemm.getTransposeA() : gemm.getTransposeB())
                 ? GemmUse::transposed
                 : GemmUse::rows;
  }
  return GemmUse::none;
}

/// Elements added to each row of an mma.sync operand: a fragment load
/// reads a pair at (g, 2 i) for rows g < 8 and i < 4. Rows of K + pad = 8
/// (mod 16) elements (K is a multiple of the K step, 8 or 16) start 4 banks
/// apart times an odd number for a 16-bit tile (4-byte pairs: the 8 rows
/// on distinct banks) and 8 banks apart times an odd number for an f32
/// tile (8-byte pairs: a half-warp's 4 rows on 32 banks); both stay 16-byte
/// aligned. K a multiple of 16 takes 8 elements (16 or 32 bytes), K = 8
/// (mod 16) none.
///
/// A transposed operand (K rows of M or N elements) is read an element at
/// a time, at rows k0 + 2 i (+ 1) and columns g: rows of a number of words
/// that is 4 (mod 16) put lane (g, i) on bank 8 i + g (f32) or 8 i + g / 2
/// (16-bit, two lanes to a word), all distinct; the pad is that many
/// words less the row's, a multiple of 16 bytes.
int64_t mmaRowPad(AllocSharedOp tile) {
  const GemmUse use = gemmUse(tile.getResult());
  if (use == GemmUse::none)
    return 0;
  const int64_t row = tile.getType().getShape().back();
  const unsigned bits = tile.getType().getElementTypeBitWidth();
  // Not an mma.sync operand type or K step: the lowering reports the gemm.
  if ((bits != 16 && bits != 32) || row % 8 != 0)
    return 0;
  if (use == GemmUse::transposed) {
    const int64_t words = row * bits / 32;
    return ((4 - words) % 16 + 16) % 16 * 32 / bits;
  }
  return row % 16 == 0 ? 8 : 0;
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
