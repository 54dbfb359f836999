//===- CastToGPU.cpp - Float casts LLVM cannot express -------------------===//
//
// LLVM has no 8-bit float types, so arith.truncf to f8E4M3FN / f8E5M2 has no
// LLVM lowering. Hopper converts two floats at once, rounding to nearest
// even and saturating to the largest finite value (CUDA's
// __nv_cvt_float2_to_fp8x2(..., __NV_SATFINITE, ...), the specs' rule):
// cvt.rn.satfinite.e4m3x2.f32 puts its first operand in the high byte.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

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
    Type f32 = rewriter.getF32Type();
    auto element = [&](int64_t i) -> Value {
      Value x =
          vecType ? vector::ExtractOp::create(rewriter, loc, in, i).getResult()
                  : in;
      if (x.getType() != f32)
        x = arith::ExtFOp::create(rewriter, loc, f32, x);
      return x;
    };
    auto rnd =
        NVVM::FPRoundingModeAttr::get(getContext(), NVVM::FPRoundingMode::RN);
    auto sat = NVVM::SaturationModeAttr::get(getContext(),
                                             NVVM::SaturationMode::SATFINITE);
    auto pairType = VectorType::get({2}, rewriter.getI8Type());
    SmallVector<Value> bytes;
    for (int64_t i = 0; i < n; i += 2) {
      Value low = element(i);
      Value high = i + 1 < n ? element(i + 1)
                             : arith::ConstantOp::create(
                                   rewriter, loc, rewriter.getF32FloatAttr(0));
      Value pair = NVVM::ConvertF32x2ToF8x2Op::create(
          rewriter, loc, pairType, high, low, rnd, sat,
          rewriter.getBoolAttr(false), TypeAttr::get(target));
      bytes.push_back(vector::ExtractOp::create(rewriter, loc, pair, 0));
      if (i + 1 < n)
        bytes.push_back(vector::ExtractOp::create(rewriter, loc, pair, 1));
    }
    Type resultType = getTypeConverter()->convertType(op.getType());
    if (!vecType) {
      rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, resultType, bytes[0]);
      return success();
    }
    Value packed = vector::FromElementsOp::create(
        rewriter, loc, VectorType::get({n}, rewriter.getI8Type()), bytes);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, resultType, packed);
    return success();
  }
};

} // namespace

void mlir::tile::populateCastToGPUPatterns(const TypeConverter &converter,
                                           RewritePatternSet &patterns) {
  patterns.add<TruncToFloat8Lowering>(converter, patterns.getContext());
}
