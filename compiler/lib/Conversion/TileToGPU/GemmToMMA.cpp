//===- GemmToMMA.cpp - tile.gemm outside a pipelined loop to mma.sync -----===//
//
// A gemm that is not the main loop of a TMA + WGMMA kernel (see
// GemmToNVGPU) becomes warp-level `mma.sync` m16n8k{8,16}: the M x N
// accumulator is cut into 16 x 8 tiles and the block's warps into a
// wm x wn grid; each warp owns a pm x pn group of tiles, keeps their
// accumulators in registers through the loop over K, and loads its operand
// fragments from the shared tiles a (M x K) and b (N x K) at each step.
//
// The fragment layouts of the rest of the kernel are not the MMA layout, so
// the accumulator goes through the op's shared buffer (M x N f32, row-major)
// on the way in and on the way out; an accumulator that is a splat (zeros,
// the common start) skips the way in.
//
// A bf16 or f16 tile with an f32 one multiplies as tf32, its elements
// widened as they are loaded; `round_tf32` rounds f32 elements with
// cvt.rna.tf32.f32 (else the tensor core truncates their bits). A
// transposed operand (transpose_a/b: stored K x M or K x N) gives the same
// fragments, each pair's two elements loaded one by one from two rows.
//
// Per 16 x 8 tile, with lane = 4 g + i, k = kStep / 2 the second half of a
// step (the PTX ISA's "Matrix Fragments for mma.m16n8k8 / m16n8k16"):
//   a: (g, 2 i ..), (g + 8, 2 i ..), (g, 2 i + k ..), (g + 8, 2 i + k ..)
//   b: (n = g, 2 i ..), (n = g, 2 i + k ..)
//   c: (g, 2 i .. 2 i + 1), (g + 8, 2 i .. 2 i + 1)
// each a pair of 16-bit elements; for tf32 (one element a register) the
// fragment's K slots i and i + 4 are read from columns 2 i and 2 i + 1 of
// the step (a permutation of K, the same for a and b: the same product in
// exact arithmetic; the tensor core's order of additions within a step may
// round the last bits differently), so that each pair of registers is one
// 8-byte (f32) or 4-byte (16-bit) load:
//   a: (g, 2 i), (g + 8, 2 i), (g, 2 i + 1), (g + 8, 2 i + 1)
//   b: (n = g, 2 i), (n = g, 2 i + 1)
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"

#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <array>

using namespace mlir;
using namespace mlir::tile;

namespace {

/// How the block's warps share the accumulator's 16 x 8 tiles.
struct WarpGrid {
  int64_t wm = 1, wn = 1; ///< warps along M and N (wm * wn may be < warps)
  int64_t pm = 1, pn = 1; ///< tiles of each warp along M and N
};

/// The grid using the most warps; among those, the one whose warps load the
/// fewest operand fragments a step (pm + pn).
WarpGrid chooseWarpGrid(int64_t tilesM, int64_t tilesN, int64_t warps) {
  WarpGrid best;
  best.pm = tilesM;
  best.pn = tilesN;
  for (int64_t wm = 1; wm <= std::min(tilesM, warps); ++wm) {
    if (tilesM % wm != 0)
      continue;
    for (int64_t wn = 1; wm * wn <= warps && wn <= tilesN; ++wn) {
      if (tilesN % wn != 0)
        continue;
      WarpGrid g{wm, wn, tilesM / wm, tilesN / wn};
      if (wm * wn > best.wm * best.wn ||
          (wm * wn == best.wm * best.wn && g.pm + g.pn < best.pm + best.pn))
        best = g;
    }
  }
  return best;
}

/// The K step of one mma.sync and the PTX type of its operands.
struct MmaKind {
  int64_t kStep;
  NVVM::MMATypes type;
  int64_t perRegister; ///< operand elements in one 32-bit register
};

/// A bf16 or f16 tile with an f32 one multiplies as tf32.
std::optional<MmaKind> mmaKind(Type elt, Type other) {
  if (elt.isF32() || other.isF32())
    return MmaKind{8, NVVM::MMATypes::tf32, 1};
  if (elt.isBF16())
    return MmaKind{16, NVVM::MMATypes::bf16, 2};
  if (elt.isF16())
    return MmaKind{16, NVVM::MMATypes::f16, 2};
  return std::nullopt;
}

Value constantIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// The scalar every element of `acc` holds, when it is a splat.
Value splatValue(OpBuilder &b, Location loc, Value acc) {
  if (auto splat = acc.getDefiningOp<SplatOp>())
    return splat.getValue();
  if (auto constant = acc.getDefiningOp<arith::ConstantOp>())
    if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
        dense && dense.isSplat())
      return arith::ConstantOp::create(b, loc,
                                       dense.getSplatValue<TypedAttr>());
  return {};
}

struct GemmLowering : OpConversionPattern<GemmOp> {
  GemmLowering(const TypeConverter &tc, MLIRContext *ctx,
               const ThreadMapping &mapping,
               const llvm::DenseMap<Operation *, Value> &buffers)
      : OpConversionPattern(tc, ctx), mapping(mapping), buffers(buffers) {}

  LogicalResult
  matchAndRewrite(GemmOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    LayoutAttr layout = getLayout(op.getType());
    Value buffer = buffers.lookup(op);
    auto resultType = dyn_cast_or_null<VectorType>(
        getTypeConverter()->convertType(op.getType()));
    std::optional<MmaKind> kind = mmaKind(op.getA().getType().getElementType(),
                                          op.getB().getType().getElementType());
    // checkMmaGemm passed before the conversion (shapes, types).
    if (!layout || !buffer || !resultType || !kind)
      return rewriter.notifyMatchFailure(op, "not an mma.sync gemm");
    auto &b = rewriter;
    ArrayRef<int64_t> shape = op.getType().getShape();
    const int64_t m = shape[0], n = shape[1];
    const bool ta = op.getTransposeA(), tb = op.getTransposeB();
    const int64_t k = op.getA().getType().getDimSize(ta ? 0 : 1);
    const WarpGrid grid = chooseWarpGrid(m / 16, n / 8, mapping.threads / 32);
    const int64_t accs = grid.pm * grid.pn * 4;
    Type f32 = b.getF32Type();
    auto accType = VectorType::get({accs}, f32);

    Value splat = splatValue(b, loc, op.getAcc());
    if (!splat) {
      gpu::BarrierOp::create(b, loc);
      storeFragment(b, loc, layout, shape, adaptor.getAcc(), buffer,
                    mapping.threadId);
      gpu::BarrierOp::create(b, loc);
    }

    Value tid = mapping.threadId;
    Value warp = arith::DivUIOp::create(b, loc, tid, constantIndex(b, loc, 32));
    Value lane = arith::RemUIOp::create(b, loc, tid, constantIndex(b, loc, 32));
    Value g = arith::DivUIOp::create(b, loc, lane, constantIndex(b, loc, 4));
    Value i = arith::RemUIOp::create(b, loc, lane, constantIndex(b, loc, 4));
    auto add = [&](OpBuilder &ob, Value x, int64_t c) -> Value {
      return c == 0
                 ? x
                 : arith::AddIOp::create(ob, loc, x, constantIndex(ob, loc, c));
    };
    auto mul = [&](OpBuilder &ob, Value x, int64_t c) -> Value {
      return c == 1
                 ? x
                 : arith::MulIOp::create(ob, loc, x, constantIndex(ob, loc, c));
    };
    // This warp's first row and column: tiles (wm_i pm .., wn_i pn ..).
    Value rowBase = mul(
        b, arith::DivUIOp::create(b, loc, warp, constantIndex(b, loc, grid.wn)),
        grid.pm * 16);
    Value colBase = mul(
        b, arith::RemUIOp::create(b, loc, warp, constantIndex(b, loc, grid.wn)),
        grid.pn * 8);
    // Row of c0/c1 of tile row p (h = 1: c2/c3), column of c0 of tile nt.
    auto cRow = [&](OpBuilder &ob, int64_t p, int64_t h) {
      return add(ob, arith::AddIOp::create(ob, loc, rowBase, g),
                 p * 16 + h * 8);
    };
    auto cCol = [&](OpBuilder &ob, int64_t q) {
      return add(ob, arith::AddIOp::create(ob, loc, colBase, mul(ob, i, 2)),
                 q * 8);
    };
    auto cIndex = [&](OpBuilder &ob, int64_t p, int64_t q, int64_t h) -> Value {
      return arith::AddIOp::create(ob, loc, mul(ob, cRow(ob, p, h), n),
                                   cCol(ob, q));
    };
    auto pairType = VectorType::get({2}, f32);

    auto compute = [&](OpBuilder &ob, Location) -> Value {
      // The accumulators: from the splat, or this warp's tiles of the buffer.
      Value init;
      if (splat) {
        init = vector::BroadcastOp::create(ob, loc, accType, splat);
      } else {
        SmallVector<Value> elements;
        for (int64_t p = 0; p < grid.pm; ++p)
          for (int64_t q = 0; q < grid.pn; ++q)
            for (int64_t h = 0; h < 2; ++h) {
              Value pair = vector::LoadOp::create(
                  ob, loc, pairType, buffer, ValueRange{cIndex(ob, p, q, h)});
              for (int64_t e = 0; e < 2; ++e)
                elements.push_back(vector::ExtractOp::create(ob, loc, pair, e));
            }
        init = vector::FromElementsOp::create(ob, loc, accType, elements);
      }
      auto loop = scf::ForOp::create(
          ob, loc, constantIndex(ob, loc, 0), constantIndex(ob, loc, k),
          constantIndex(ob, loc, kind->kStep), ValueRange{init},
          [&](OpBuilder &lb, Location, Value k0, ValueRange carried) {
            Value acc = carried[0];
            // Columns k0 + 2 i and k0 + 2 i + 1: one 16-bit register pair,
            // or for tf32 the step's K slots i and i + 4 (any order of K
            // taken alike for a and b is the same product, up to rounding),
            // so each tf32 pair is one load too.
            Value kCol = arith::AddIOp::create(lb, loc, k0, mul(lb, i, 2));
            // The two elements of operand `tile` at (row, kCol + dk):
            // loaded together (rows and columns are even: aligned to the
            // pair), or, from a transposed tile (K rows), one at a time.
            auto loadPair = [&](Value tile, bool transposed, Value row,
                                int64_t dk) -> Value {
              Type elt = cast<MemRefType>(tile.getType()).getElementType();
              auto pairType = VectorType::get({2}, elt);
              Value col = add(lb, kCol, dk);
              if (transposed)
                return vector::FromElementsOp::create(
                    lb, loc, pairType,
                    ValueRange{
                        memref::LoadOp::create(lb, loc, tile,
                                               ValueRange{col, row}),
                        memref::LoadOp::create(
                            lb, loc, tile, ValueRange{add(lb, col, 1), row})});
              const int64_t bytes = 2 * elt.getIntOrFloatBitWidth() / 8;
              return vector::LoadOp::create(
                  lb, loc, pairType, tile, ValueRange{row, col},
                  /*nontemporal=*/false, llvm::MaybeAlign(bytes));
            };
            // One 32-bit register of a 16-bit operand: a pair.
            auto reg = [&](Value tile, bool transposed, Value row,
                           int64_t dk) -> Value {
              Value pair = loadPair(tile, transposed, row, dk);
              if (cast<VectorType>(pair.getType()).getElementType().isF16())
                return pair;
              Value word = vector::BitCastOp::create(
                  lb, loc, VectorType::get({1}, lb.getI32Type()), pair);
              return vector::ExtractOp::create(lb, loc, word, 0);
            };
            // The tf32 registers of K slots i and i + 4: f32 bits, rounded
            // when asked; 16-bit elements widened (exact in tf32).
            auto tf32Regs = [&](Value tile, bool transposed,
                                Value row) -> std::array<Value, 2> {
              Value pair = loadPair(tile, transposed, row, 0);
              std::array<Value, 2> regs;
              for (int64_t e = 0; e < 2; ++e) {
                Value x = vector::ExtractOp::create(lb, loc, pair, e);
                if (!x.getType().isF32())
                  x = arith::ExtFOp::create(lb, loc, lb.getF32Type(), x);
                else if (op.getRoundTf32())
                  regs[e] = NVVM::ConvertFloatToTF32Op::create(
                      lb, loc, lb.getI32Type(), x, NVVM::FPRoundingMode::RNA,
                      NVVM::SaturationMode::NONE, /*relu=*/false);
                if (!regs[e])
                  regs[e] =
                      arith::BitcastOp::create(lb, loc, lb.getI32Type(), x);
              }
              return regs;
            };
            const bool tf32 = kind->perRegister == 1;
            const int64_t half = kind->kStep / 2;
            SmallVector<SmallVector<Value, 4>> as, bs;
            for (int64_t p = 0; p < grid.pm; ++p) {
              Value r0 =
                  add(lb, arith::AddIOp::create(lb, loc, rowBase, g), p * 16);
              Value r8 = add(lb, r0, 8);
              if (tf32) {
                auto [a0, a2] = tf32Regs(adaptor.getA(), ta, r0);
                auto [a1, a3] = tf32Regs(adaptor.getA(), ta, r8);
                as.push_back({a0, a1, a2, a3});
                continue;
              }
              as.push_back({reg(adaptor.getA(), ta, r0, 0),
                            reg(adaptor.getA(), ta, r8, 0),
                            reg(adaptor.getA(), ta, r0, half),
                            reg(adaptor.getA(), ta, r8, half)});
            }
            for (int64_t q = 0; q < grid.pn; ++q) {
              Value col =
                  add(lb, arith::AddIOp::create(lb, loc, colBase, g), q * 8);
              if (tf32) {
                auto [b0, b1] = tf32Regs(adaptor.getB(), tb, col);
                bs.push_back({b0, b1});
                continue;
              }
              bs.push_back({reg(adaptor.getB(), tb, col, 0),
                            reg(adaptor.getB(), tb, col, half)});
            }
            auto resultStruct = LLVM::LLVMStructType::getLiteral(
                lb.getContext(), {f32, f32, f32, f32});
            SmallVector<Value> next;
            for (int64_t p = 0; p < grid.pm; ++p)
              for (int64_t q = 0; q < grid.pn; ++q) {
                const int64_t base = (p * grid.pn + q) * 4;
                SmallVector<Value, 4> c;
                for (int64_t e = 0; e < 4; ++e)
                  c.push_back(
                      vector::ExtractOp::create(lb, loc, acc, base + e));
                auto mma = NVVM::MmaOp::create(
                    lb, loc, resultStruct, as[p], bs[q], c,
                    {16, 8, kind->kStep}, std::nullopt, std::nullopt,
                    std::array{kind->type, kind->type},
                    std::array{NVVM::MMALayout::row, NVVM::MMALayout::col});
                for (int64_t e = 0; e < 4; ++e)
                  next.push_back(LLVM::ExtractValueOp::create(
                      lb, loc, mma.getResult(), ArrayRef<int64_t>{e}));
              }
            scf::YieldOp::create(lb, loc,
                                 ValueRange{vector::FromElementsOp::create(
                                     lb, loc, accType, next)});
          });
      return loop.getResult(0);
    };
    auto storeResult = [&](OpBuilder &ob, Value acc) {
      for (int64_t p = 0; p < grid.pm; ++p)
        for (int64_t q = 0; q < grid.pn; ++q)
          for (int64_t h = 0; h < 2; ++h) {
            const int64_t base = (p * grid.pn + q) * 4 + h * 2;
            Value pair = vector::FromElementsOp::create(
                ob, loc, pairType,
                ValueRange{vector::ExtractOp::create(ob, loc, acc, base),
                           vector::ExtractOp::create(ob, loc, acc, base + 1)});
            vector::StoreOp::create(ob, loc, pair, buffer,
                                    ValueRange{cIndex(ob, p, q, h)});
          }
    };

    // Warps beyond the grid hold no tile, but meet every barrier. With a
    // splat start, the buffer may still be read by the previous gemm of a
    // loop until the barrier before the stores.
    Value active;
    if (grid.wm * grid.wn < mapping.threads / 32)
      active = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, warp,
                                     constantIndex(b, loc, grid.wm * grid.wn));
    Value acc;
    if (!active) {
      acc = compute(b, loc);
    } else {
      acc =
          scf::IfOp::create(
              b, loc, active,
              [&](OpBuilder &ob, Location l) {
                scf::YieldOp::create(ob, l, compute(ob, l));
              },
              [&](OpBuilder &ob, Location l) {
                scf::YieldOp::create(ob, l,
                                     Value(arith::ConstantOp::create(
                                         ob, l,
                                         DenseElementsAttr::get(
                                             accType, ob.getF32FloatAttr(0)))));
              })
              .getResult(0);
    }
    if (splat)
      gpu::BarrierOp::create(b, loc);
    if (!active) {
      storeResult(b, acc);
    } else {
      scf::IfOp::create(b, loc, active, [&](OpBuilder &ob, Location l) {
        storeResult(ob, acc);
        scf::YieldOp::create(ob, l);
      });
    }
    gpu::BarrierOp::create(b, loc);
    rewriter.replaceOp(op, loadFragment(b, loc, layout, shape, resultType,
                                        buffer, mapping.threadId));
    return success();
  }

  ThreadMapping mapping;
  const llvm::DenseMap<Operation *, Value> &buffers;
};

} // namespace

LogicalResult mlir::tile::checkMmaGemm(GemmOp op) {
  MemRefType a = op.getA().getType();
  auto fail = [&](const Twine &what) {
    return op.emitOpError() << "cannot lower to mma.sync: " << what;
  };
  std::optional<MmaKind> kind =
      mmaKind(a.getElementType(), op.getB().getType().getElementType());
  if (!kind)
    return fail(
        Twine("operands must be bf16, f16 or f32 (tf32) outside a "
              "pipelined TMA + WGMMA loop, got ") +
        (isa<Float8E4M3FNType>(a.getElementType()) ? "f8E4M3FN" : "f8E5M2"));
  RankedTensorType acc = op.getType();
  const int64_t m = acc.getDimSize(0), n = acc.getDimSize(1),
                k = a.getDimSize(op.getTransposeA() ? 0 : 1);
  if (m % 16 != 0 || n % 8 != 0 || k % kind->kStep != 0)
    return fail("M, N and K must be multiples of 16, 8 and " +
                Twine(kind->kStep) + ", got " + Twine(m) + " x " + Twine(n) +
                " x " + Twine(k));
  return success();
}

MemRefType mlir::tile::gemmBufferType(GemmOp op) {
  RankedTensorType acc = op.getType();
  auto space =
      gpu::AddressSpaceAttr::get(op.getContext(), gpu::AddressSpace::Workgroup);
  return MemRefType::get({acc.getNumElements()}, acc.getElementType(),
                         MemRefLayoutAttrInterface{}, space);
}

void mlir::tile::populateGemmToMMAPatterns(
    const TypeConverter &converter, const ThreadMapping &mapping,
    const llvm::DenseMap<Operation *, Value> &buffers,
    RewritePatternSet &patterns) {
  patterns.add<GemmLowering>(converter, patterns.getContext(), mapping,
                             buffers);
}
