//===- TransposeToGPU.cpp - tile.transpose through shared memory ---------===//
//
// Two lowerings, both through a shared buffer of the transpose's own:
//
// * Words (1- and 2-byte elements, when the layouts allow it). Shared memory
//   moves 4-byte words as fast as bytes, so moving bytes one at a time costs
//   4x. Instead the k = 4 / elementBytes threads that hold k consecutive
//   source rows (lanes P apart, P threads a row) exchange words with warp
//   shuffles, so that each holds k x k element blocks; it transposes each
//   block in registers with byte permutes (prmt), and stores the block's
//   rows as words into the transposed buffer. The result is read back in
//   16-byte (or 8- or 4-byte) vectors. The buffer's rows are swizzled by
//   16-byte chunks (chunk ^ g(row)), and each thread stores its words in an
//   order rotated by its column chunk: at most two threads of a warp meet
//   in a bank on a store, none on a load. A chunk of fewer than k x k
//   elements (8 bytes) joins the thread's next chunks (the rows a round of
//   threads further down) until the group has a block for each member.
//
// * Elements (everything else). Each thread stores its elements one at a
//   time into a buffer whose rows are padded by one word, the block
//   synchronises, and each thread loads its result elements one at a time
//   in the transposed order (at most two threads a bank).
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"

#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/MathExtras.h"

#include <numeric>

using namespace mlir;
using namespace mlir::tile;

static constexpr int64_t kWarpSize = 32;

namespace {
/// How a transpose of 1- or 2-byte elements exchanges words. The source
/// fragment is R x C (leading dimensions are 1), distributed in chunks of
/// `vector` elements over `threads` threads, P = C / vector threads a row.
struct WordPlan {
  int64_t elementBytes; // 1 or 2
  int64_t k;            // elements a word: 4 / elementBytes
  int64_t rows, cols;   // R, C of the source
  int64_t threads;
  int64_t vector;       // source chunk, elements
  int64_t perRow;       // P
  int64_t span;         // chunks a thread merges: k x k / vector, or 1
  int64_t ownWords;     // n: blocks of a merged chunk each member transposes
  int64_t resultVector; // result chunk, elements

  int64_t rowWords() const { return rows * elementBytes / 4; }
  int64_t rowChunks() const { return rows * elementBytes / 16; }
};
} // namespace

/// The word plan of `op`, or nothing when its types or layouts do not allow
/// one (then the element lowering is used).
static std::optional<WordPlan> planWords(TransposeOp op) {
  RankedTensorType source = op.getSource().getType(), result = op.getType();
  LayoutAttr from = getLayout(source), to = getLayout(result);
  if (!from || !to || !from.getSliced().empty() || !to.getSliced().empty() ||
      from.getShape() != source.getShape() ||
      to.getShape() != result.getShape())
    return std::nullopt;
  WordPlan plan;
  int64_t bits = source.getElementTypeBitWidth();
  if (bits != 8 && bits != 16)
    return std::nullopt;
  plan.elementBytes = bits / 8;
  plan.k = 4 / plan.elementBytes;
  plan.rows = source.getDimSize(source.getRank() - 2);
  plan.cols = source.getDimSize(source.getRank() - 1);
  plan.threads = from.getThreads();
  plan.vector = from.getVector();
  plan.resultVector = to.getVector();
  const int64_t k = plan.k;
  if ((plan.vector % (k * k) != 0 && (k * k) % plan.vector != 0) ||
      plan.cols % plan.vector != 0 || plan.threads % kWarpSize != 0 ||
      to.getThreads() != plan.threads || plan.vector % k != 0)
    return std::nullopt;
  plan.perRow = plan.cols / plan.vector;
  plan.span = std::max<int64_t>(1, k * k / plan.vector);
  plan.ownWords = plan.span * plan.vector / (k * k);
  const int64_t chunksPerThread =
      source.getNumElements() / (plan.threads * plan.vector);
  if (source.getNumElements() % (plan.threads * plan.vector) != 0 ||
      chunksPerThread % plan.span != 0)
    return std::nullopt;
  // A group's k rows lie in one warp, and every chunk of a thread starts a
  // row of the same place in its group.
  if (kWarpSize % (plan.perRow * k) != 0 ||
      (plan.threads / plan.perRow) % k != 0)
    return std::nullopt;
  // Buffer rows of whole 16-byte chunks, a power of two of them (the
  // swizzle is an xor), read in 4-, 8- or 16-byte vectors.
  int64_t rowBytes = plan.rows * plan.elementBytes;
  int64_t readBytes = plan.resultVector * plan.elementBytes;
  if (rowBytes % 16 != 0 || !llvm::isPowerOf2_64(rowBytes / 16) ||
      (readBytes != 4 && readBytes != 8 && readBytes != 16) ||
      plan.rows % plan.resultVector != 0)
    return std::nullopt;
  return plan;
}

MemRefType mlir::tile::transposeBufferType(TransposeOp op) {
  auto space =
      gpu::AddressSpaceAttr::get(op.getContext(), gpu::AddressSpace::Workgroup);
  if (std::optional<WordPlan> plan = planWords(op))
    return MemRefType::get({plan->cols, plan->rowWords()},
                           IntegerType::get(op.getContext(), 32),
                           MemRefLayoutAttrInterface{}, space);
  RankedTensorType source = op.getSource().getType();
  int64_t rows = source.getDimSize(source.getRank() - 2);
  int64_t cols = source.getDimSize(source.getRank() - 1);
  int64_t bytes = std::max<int64_t>(1, source.getElementTypeBitWidth() / 8);
  int64_t pad = std::max<int64_t>(1, 4 / bytes); // one 4-byte word
  return MemRefType::get({rows, cols + pad}, source.getElementType(),
                         MemRefLayoutAttrInterface{}, space);
}

namespace {
/// i32 arithmetic for the word lowering's thread-dependent values.
struct I32 {
  OpBuilder &b;
  Location loc;

  Value c(int64_t v) const {
    return arith::ConstantIntOp::create(b, loc, v, 32);
  }
  Value add(Value x, Value y) const {
    return arith::AddIOp::create(b, loc, x, y);
  }
  Value sub(Value x, Value y) const {
    return arith::SubIOp::create(b, loc, x, y);
  }
  Value mul(Value x, int64_t y) const {
    return arith::MulIOp::create(b, loc, x, c(y));
  }
  Value div(Value x, int64_t y) const {
    return arith::DivUIOp::create(b, loc, x, c(y));
  }
  Value rem(Value x, int64_t y) const {
    return arith::RemUIOp::create(b, loc, x, c(y));
  }
  Value bitAnd(Value x, int64_t y) const {
    return arith::AndIOp::create(b, loc, x, c(y));
  }
  Value bitXor(Value x, Value y) const {
    return arith::XOrIOp::create(b, loc, x, y);
  }
  Value bitOr(Value x, Value y) const {
    return arith::OrIOp::create(b, loc, x, y);
  }
  Value shl(Value x, Value y) const {
    return arith::ShLIOp::create(b, loc, x, y);
  }
  Value shr(Value x, int64_t y) const {
    return arith::ShRUIOp::create(b, loc, x, c(y));
  }
  Value eq(Value x, int64_t y) const {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, c(y));
  }
  Value index(Value x) const {
    return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), x);
  }
  /// A prmt selector: for each (position, nibble), byte `position` of the
  /// result is byte `nibble` of the two sources.
  Value selector(ArrayRef<std::pair<Value, Value>> bytes) const {
    Value sel = c(0);
    for (auto [position, nibble] : bytes)
      sel = bitOr(sel, shl(nibble, mul(position, 4)));
    return sel;
  }
  Value prmt(Value lo, Value hi, Value sel) const {
    return NVVM::PermuteOp::create(b, loc, b.getI32Type(), lo, hi, sel,
                                   NVVM::PermuteMode::DEFAULT);
  }
};
} // namespace

/// Element `element` (of k a word) of each round's word, gathered into one
/// word whose element a comes from round (q - a) mod k: `rounds[r]` came
/// from the group member (q - r) mod k, which holds source row r0 + that.
/// `rotation` is rotationSelector(q) (k == 4 only).
static Value gatherWord(const I32 &i32, ArrayRef<Value> rounds, Value q,
                        Value element, Value rotation, int64_t k) {
  if (k == 1)
    return rounds[0];
  if (k == 2) {
    // 2-byte elements: bytes 2a + h of the result are bytes 4r + 2e + h of
    // the two rounds, r = (q - a) mod 2 = q ^ a.
    SmallVector<std::pair<Value, Value>> bytes;
    for (int64_t a = 0; a < 2; ++a) {
      Value r = i32.bitXor(q, i32.c(a));
      for (int64_t h = 0; h < 2; ++h)
        bytes.push_back(
            {i32.c(2 * a + h),
             i32.add(i32.add(i32.mul(r, 4), i32.mul(element, 2)), i32.c(h))});
    }
    return i32.prmt(rounds[0], rounds[1], i32.selector(bytes));
  }
  // k == 4: byte r of `inRoundOrder` is byte `element` of round r; one more
  // permute puts round (q - a) mod 4 at byte a.
  Value pair = i32.selector(
      {{i32.c(0), element}, {i32.c(1), i32.add(element, i32.c(4))}});
  Value lo = i32.prmt(rounds[0], rounds[1], pair);
  Value hi = i32.prmt(rounds[2], rounds[3], pair);
  Value inRoundOrder = i32.prmt(lo, hi, i32.c(0x5410));
  return i32.prmt(inRoundOrder, inRoundOrder, rotation);
}

/// The prmt selector that moves byte (q - a) mod 4 to byte a.
static Value rotationSelector(const I32 &i32, Value q) {
  SmallVector<std::pair<Value, Value>> bytes;
  for (int64_t a = 0; a < 4; ++a)
    bytes.push_back(
        {i32.c(a), i32.bitAnd(i32.sub(i32.add(q, i32.c(4)), i32.c(a)), 3)});
  return i32.selector(bytes);
}

/// The word of buffer row `row` that holds word `word` of that row: 16-byte
/// chunks are swizzled by g(row) = (row ^ row >> 2) mod chunks.
static Value swizzledWord(const I32 &i32, const WordPlan &plan, Value row,
                          Value word) {
  Value g = i32.bitAnd(i32.bitXor(row, i32.shr(row, 2)), plan.rowChunks() - 1);
  Value chunk = i32.bitXor(i32.div(word, 4), g);
  return i32.add(i32.mul(chunk, 4), i32.rem(word, 4));
}

namespace {
struct TransposeLowering : OpConversionPattern<TransposeOp> {
  TransposeLowering(const TypeConverter &tc, MLIRContext *ctx,
                    const ThreadMapping &mapping,
                    const llvm::DenseMap<Operation *, Value> &buffers)
      : OpConversionPattern(tc, ctx), mapping(mapping), buffers(buffers) {}

  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto vecType = dyn_cast_or_null<VectorType>(
        getTypeConverter()->convertType(op.getType()));
    Value buffer = buffers.lookup(op);
    if (!vecType || !buffer)
      return rewriter.notifyMatchFailure(op, "no shared buffer or vector type");
    if (mapping.waitFirst.contains(op)) // the last step's reads first
      gpu::BarrierOp::create(rewriter, op.getLoc());
    Value result;
    if (std::optional<WordPlan> plan = planWords(op))
      result =
          lowerWords(op, *plan, adaptor.getSource(), buffer, vecType, rewriter);
    else
      result =
          lowerElements(op, adaptor.getSource(), buffer, vecType, rewriter);
    rewriter.replaceOp(op, result);
    return success();
  }

  Value lowerWords(TransposeOp op, const WordPlan &plan, Value source,
                   Value buffer, VectorType vecType,
                   ConversionPatternRewriter &rewriter) const {
    Location loc = op.getLoc();
    I32 i32{rewriter, loc};
    const int64_t k = plan.k, n = plan.ownWords, words = plan.vector / k;
    const int64_t roundRows = plan.threads / plan.perRow; // rows a round
    Value tid = arith::IndexCastUIOp::create(
        rewriter, loc, rewriter.getI32Type(), mapping.threadId);
    Value lane = i32.rem(tid, kWarpSize);
    Value c = i32.rem(tid, plan.perRow); // column chunk of the source
    Value q = i32.rem(i32.div(tid, plan.perRow), k); // place in the group
    // Round r reads from the group member (q - r) mod k.
    SmallVector<Value> sourceLane;
    for (int64_t r = 0; r < k; ++r) {
      Value from = i32.bitAnd(i32.sub(i32.add(q, i32.c(k)), i32.c(r)), k - 1);
      sourceLane.push_back(
          i32.add(lane, i32.mul(i32.sub(from, q), plan.perRow)));
    }
    // Store i of a block writes element (i + c) mod k of the block's words.
    SmallVector<Value> storeElement;
    for (int64_t i = 0; i < k; ++i)
      storeElement.push_back(i32.rem(i32.add(c, i32.c(i)), k));
    Value rotation = k == 4 ? rotationSelector(i32, q) : Value();

    auto wordsType = VectorType::get({words}, rewriter.getI32Type());
    const int64_t sourceSlots =
        cast<VectorType>(source.getType()).getNumElements();
    Value width = i32.c(kWarpSize);
    for (int64_t chunk = 0; chunk * plan.vector < sourceSlots;
         chunk += plan.span) {
      // The words of the merged chunks, in order.
      SmallVector<Value> w;
      for (int64_t sub = 0; sub < plan.span; ++sub) {
        SmallVector<int64_t> slots(plan.vector);
        std::iota(slots.begin(), slots.end(), (chunk + sub) * plan.vector);
        Value piece =
            vector::ShuffleOp::create(rewriter, loc, source, source, slots);
        Value own = vector::BitCastOp::create(rewriter, loc, wordsType, piece);
        for (int64_t m = 0; m < words; ++m)
          w.push_back(vector::ExtractOp::create(rewriter, loc, own, m));
      }
      for (int64_t mm = 0; mm < n; ++mm) {
        // Our block: word `wordInChunk` of merged chunk `sub`.
        Value block = i32.add(i32.mul(q, n), i32.c(mm));
        Value wordInChunk = block, firstRound = i32.c(chunk * roundRows);
        if (plan.span > 1) {
          wordInChunk = i32.rem(block, words);
          firstRound =
              i32.mul(i32.add(i32.div(block, words), i32.c(chunk)), roundRows);
        }
        // Source row of that chunk, and the first row of its group.
        Value row = i32.add(firstRound, i32.div(tid, plan.perRow));
        Value rowWord = i32.div(i32.sub(row, q), k); // buffer word of row r0
        // Round r: send word ((q + r) mod k) * n + mm, receive ours.
        SmallVector<Value> rounds;
        for (int64_t r = 0; r < k; ++r) {
          Value to = i32.bitAnd(i32.add(q, i32.c(r)), k - 1);
          Value send = w[mm];
          for (int64_t d = 1; d < k; ++d)
            send = arith::SelectOp::create(rewriter, loc, i32.eq(to, d),
                                           w[d * n + mm], send);
          if (r == 0) {
            rounds.push_back(send);
            continue;
          }
          rounds.push_back(gpu::ShuffleOp::create(rewriter, loc, send,
                                                  sourceLane[r], width,
                                                  gpu::ShuffleMode::IDX)
                               .getShuffleResult());
        }
        // Element e of the block is buffer row col0 + wordInChunk * k + e.
        Value firstRow =
            i32.add(i32.mul(c, plan.vector), i32.mul(wordInChunk, k));
        for (int64_t i = 0; i < k; ++i) {
          Value word = gatherWord(i32, rounds, q, storeElement[i], rotation, k);
          Value bufferRow = i32.add(firstRow, storeElement[i]);
          Value col = swizzledWord(i32, plan, bufferRow, rowWord);
          memref::StoreOp::create(
              rewriter, loc, word, buffer,
              ValueRange{i32.index(bufferRow), i32.index(col)});
        }
      }
    }
    gpu::BarrierOp::create(rewriter, loc);

    // Result chunks: vectors of whole words from the swizzled rows.
    const int64_t readWords = plan.resultVector * plan.elementBytes / 4;
    auto readType = VectorType::get({readWords}, rewriter.getI32Type());
    auto chunkType =
        VectorType::get({plan.resultVector}, vecType.getElementType());
    SmallVector<Value> elements;
    for (int64_t slot = 0; slot < vecType.getNumElements();
         slot += plan.resultVector) {
      SlotCoords at =
          slotCoords(rewriter, loc, getLayout(op.getType()),
                     op.getType().getShape(), mapping.threadId, slot);
      Value j =
          arith::IndexCastUIOp::create(rewriter, loc, rewriter.getI32Type(),
                                       at.coords[at.coords.size() - 2]);
      Value i = arith::IndexCastUIOp::create(
          rewriter, loc, rewriter.getI32Type(), at.coords.back());
      Value col = swizzledWord(i32, plan, j, i32.div(i, plan.k));
      Value loaded =
          vector::LoadOp::create(rewriter, loc, readType, buffer,
                                 ValueRange{i32.index(j), i32.index(col)});
      Value piece = vector::BitCastOp::create(rewriter, loc, chunkType, loaded);
      for (int64_t e = 0; e < plan.resultVector; ++e)
        elements.push_back(vector::ExtractOp::create(rewriter, loc, piece, e));
    }
    return vector::FromElementsOp::create(rewriter, loc, vecType, elements);
  }

  Value lowerElements(TransposeOp op, Value source, Value buffer,
                      VectorType vecType,
                      ConversionPatternRewriter &rewriter) const {
    Location loc = op.getLoc();
    const int64_t slots = vecType.getNumElements();
    auto lastTwo = [&](RankedTensorType type, int64_t slot) {
      SlotCoords at = slotCoords(rewriter, loc, getLayout(type),
                                 type.getShape(), mapping.threadId, slot);
      return std::pair(at.coords[at.coords.size() - 2], at.coords.back());
    };
    for (int64_t slot = 0; slot < slots; ++slot) {
      auto [i, j] = lastTwo(op.getSource().getType(), slot);
      Value element = vector::ExtractOp::create(rewriter, loc, source, slot);
      memref::StoreOp::create(rewriter, loc, element, buffer, ValueRange{i, j});
    }
    gpu::BarrierOp::create(rewriter, loc);
    SmallVector<Value> elements;
    for (int64_t slot = 0; slot < slots; ++slot) {
      auto [r, s] = lastTwo(op.getType(), slot);
      elements.push_back(
          memref::LoadOp::create(rewriter, loc, buffer, ValueRange{s, r}));
    }
    return vector::FromElementsOp::create(rewriter, loc, vecType, elements);
  }

  ThreadMapping mapping;
  const llvm::DenseMap<Operation *, Value> &buffers;
};
} // namespace

void mlir::tile::populateTransposeToGPUPatterns(
    const TypeConverter &converter, const ThreadMapping &mapping,
    const llvm::DenseMap<Operation *, Value> &buffers,
    RewritePatternSet &patterns) {
  patterns.add<TransposeLowering>(converter, patterns.getContext(), mapping,
                                  buffers);
}
