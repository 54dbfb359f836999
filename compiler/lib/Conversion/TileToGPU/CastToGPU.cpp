//===- CastToGPU.cpp - Float casts LLVM cannot express -------------------===//
//
// LLVM has no 8-bit float types, so arith.truncf to f8E4M3FN / f8E5M2 has no
// LLVM lowering. Hopper converts two floats at once, rounding to nearest
// even and saturating to the largest finite value (CUDA's
// __nv_cvt_float2_to_fp8x2(..., __NV_SATFINITE, ...), the specs' rule):
// cvt.rn.satfinite.e4m3x2.f32 puts its first operand in the high byte.
// Whole pairs stay 16-bit words that are bitcast to the bytes: built byte
// by byte instead, the vector cost ~5 extra SASS instructions a pair, which
// on the H200 cost per_token_cast (K = 576, 2048, 7168) 7-10% of copy
// bandwidth. A truncation to f16 toward zero (E5M6's first step) is
// cvt.rz.f16x2.f32, two at once.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

/// Element i of `in` (a vector, or a scalar as its element 0) widened to
/// f32; 0.0 past the end (the other half of an odd count's last pair).
Value f32Element(ConversionPatternRewriter &rewriter, Location loc, Value in,
                 int64_t i) {
  auto vecType = dyn_cast<VectorType>(in.getType());
  if (i >= (vecType ? vecType.getNumElements() : 1))
    return arith::ConstantOp::create(rewriter, loc,
                                     rewriter.getF32FloatAttr(0));
  Value x = vecType
                ? vector::ExtractOp::create(rewriter, loc, in, i).getResult()
                : in;
  if (!x.getType().isF32())
    x = arith::ExtFOp::create(rewriter, loc, rewriter.getF32Type(), x);
  return x;
}

struct TruncToFloat8Lowering : OpConversionPattern<arith::TruncFOp> {
  TruncToFloat8Lowering(const TypeConverter &tc, MLIRContext *ctx)
      : OpConversionPattern(tc, ctx, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(arith::TruncFOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type target = getElementTypeOrSelf(op.getType());
    if (!isa<Float8E4M3FNType, Float8E5M2Type>(target))
      return rewriter.notifyMatchFailure(op, "not a cast to fp8");
    Location loc = op.getLoc();
    Value in = adaptor.getIn();
    auto vecType = dyn_cast<VectorType>(in.getType());
    int64_t n = vecType ? vecType.getNumElements() : 1;
    auto rnd =
        NVVM::FPRoundingModeAttr::get(getContext(), NVVM::FPRoundingMode::RN);
    auto sat = NVVM::SaturationModeAttr::get(getContext(),
                                             NVVM::SaturationMode::SATFINITE);
    auto pair = [&](int64_t i, Type type) -> Value {
      Value low = f32Element(rewriter, loc, in, i);
      Value high = f32Element(rewriter, loc, in, i + 1);
      return NVVM::ConvertF32x2ToF8x2Op::create(
          rewriter, loc, type, high, low, rnd, sat, rewriter.getBoolAttr(false),
          TypeAttr::get(target));
    };
    Type resultType = getTypeConverter()->convertType(op.getType());
    if (!vecType) {
      Value bytes = pair(0, VectorType::get({2}, rewriter.getI8Type()));
      rewriter.replaceOpWithNewOp<arith::BitcastOp>(
          op, resultType, vector::ExtractOp::create(rewriter, loc, bytes, 0));
      return success();
    }
    if (n % 2 == 0) {
      // Whole pairs: kept as 16-bit words, so that the bytes are never
      // taken apart and put back together.
      SmallVector<Value> words;
      for (int64_t i = 0; i < n; i += 2)
        words.push_back(pair(i, rewriter.getI16Type()));
      Value packed = vector::FromElementsOp::create(
          rewriter, loc, VectorType::get({n / 2}, rewriter.getI16Type()),
          words);
      Value bytes = vector::BitCastOp::create(
          rewriter, loc, VectorType::get({n}, rewriter.getI8Type()), packed);
      rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, resultType, bytes);
      return success();
    }
    auto pairType = VectorType::get({2}, rewriter.getI8Type());
    SmallVector<Value> bytes;
    for (int64_t i = 0; i < n; i += 2) {
      Value two = pair(i, pairType);
      bytes.push_back(vector::ExtractOp::create(rewriter, loc, two, 0));
      if (i + 1 < n)
        bytes.push_back(vector::ExtractOp::create(rewriter, loc, two, 1));
    }
    Value packed = vector::FromElementsOp::create(
        rewriter, loc, VectorType::get({n}, rewriter.getI8Type()), bytes);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, resultType, packed);
    return success();
  }
};

/// arith.truncf toward_zero from f32 to f16: pairs through
/// cvt.rz.f16x2.f32 (its first operand to the high half). LLVM's lowering
/// of a rounding mode is a constrained intrinsic NVPTX does not take.
struct TruncToHalfTowardZeroLowering : OpConversionPattern<arith::TruncFOp> {
  TruncToHalfTowardZeroLowering(const TypeConverter &tc, MLIRContext *ctx)
      : OpConversionPattern(tc, ctx, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(arith::TruncFOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<arith::RoundingMode> mode = op.getRoundingmode();
    if (!mode || *mode != arith::RoundingMode::toward_zero ||
        !getElementTypeOrSelf(op.getType()).isF16() ||
        !getElementTypeOrSelf(op.getIn().getType()).isF32())
      return rewriter.notifyMatchFailure(op, "not f32 to f16 toward zero");
    Location loc = op.getLoc();
    Value in = adaptor.getIn();
    auto vecType = dyn_cast<VectorType>(in.getType());
    int64_t n = vecType ? vecType.getNumElements() : 1;
    auto pairType = VectorType::get({2}, rewriter.getF16Type());
    SmallVector<Value> halves;
    for (int64_t i = 0; i < n; i += 2) {
      Value low = f32Element(rewriter, loc, in, i);
      Value high = f32Element(rewriter, loc, in, i + 1);
      Value pair = NVVM::ConvertF32x2ToF16x2Op::create(
          rewriter, loc, pairType, high, low, Value(),
          NVVM::FPRoundingMode::RZ);
      for (int64_t j = 0; j < 2 && i + j < n; ++j)
        halves.push_back(vector::ExtractOp::create(rewriter, loc, pair, j));
    }
    if (!vecType) {
      rewriter.replaceOp(op, halves[0]);
      return success();
    }
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(
        op, getTypeConverter()->convertType(op.getType()), halves);
    return success();
  }
};

/// arith.extf from fp8: pairs through cvt.rn.f16x2.{e4m3,e5m2}x2 (exact),
/// then f16 to the target (exact for f32; bf16 through f32, rounded).
struct ExtFromFloat8Lowering : OpConversionPattern<arith::ExtFOp> {
  ExtFromFloat8Lowering(const TypeConverter &tc, MLIRContext *ctx)
      : OpConversionPattern(tc, ctx, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(arith::ExtFOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type source = getElementTypeOrSelf(op.getIn().getType());
    if (!isa<Float8E4M3FNType, Float8E5M2Type>(source))
      return rewriter.notifyMatchFailure(op, "not a cast from fp8");
    Location loc = op.getLoc();
    Value in = adaptor.getIn();
    auto vecType = dyn_cast<VectorType>(in.getType());
    int64_t n = vecType ? vecType.getNumElements() : 1;
    Type i8 = rewriter.getI8Type(), f16 = rewriter.getF16Type();
    Type target = getElementTypeOrSelf(op.getType());
    auto byte = [&](int64_t i) -> Value {
      if (i >= n)
        return arith::ConstantIntOp::create(rewriter, loc, 0, 8);
      Value x =
          vecType ? vector::ExtractOp::create(rewriter, loc, in, i).getResult()
                  : in;
      return arith::BitcastOp::create(rewriter, loc, i8, x);
    };
    auto widen = [&](Value half) -> Value {
      if (target == f16)
        return half;
      Value f =
          arith::ExtFOp::create(rewriter, loc, rewriter.getF32Type(), half);
      return target.isF32() ? f
                            : arith::TruncFOp::create(rewriter, loc, target, f)
                                  .getResult();
    };
    auto pairType = VectorType::get({2}, i8);
    auto halfPair = VectorType::get({2}, f16);
    SmallVector<Value> values;
    for (int64_t i = 0; i < n; i += 2) {
      Value pair = vector::FromElementsOp::create(
          rewriter, loc, pairType, ValueRange{byte(i), byte(i + 1)});
      Value halves = NVVM::ConvertF8x2ToF16x2Op::create(
          rewriter, loc, halfPair, pair, rewriter.getBoolAttr(false),
          TypeAttr::get(source));
      for (int64_t j = 0; j < 2 && i + j < n; ++j)
        values.push_back(
            widen(vector::ExtractOp::create(rewriter, loc, halves, j)));
    }
    if (!vecType) {
      rewriter.replaceOp(op, values[0]);
      return success();
    }
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(
        op, getTypeConverter()->convertType(op.getType()), values);
    return success();
  }
};

} // namespace

void mlir::tile::populateCastToGPUPatterns(const TypeConverter &converter,
                                           RewritePatternSet &patterns) {
  patterns.add<TruncToFloat8Lowering, TruncToHalfTowardZeroLowering,
               ExtFromFloat8Lowering>(converter, patterns.getContext());
}
