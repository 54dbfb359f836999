//===- MathToGPU.cpp - Math functions without libdevice ------------------===//
//
// tilejit ships no libdevice (and GPUToNVVM would turn math ops, and LLVM
// intrinsics such as fabs, into calls to it), so every math op is lowered
// here to arithmetic NVPTX selects directly.
//
// expf: j = rint(x log2 e) (clamped to [-252, 254]), r = x - j ln 2 (two FMAs
// with a split ln 2, so r is exact to a few ulp), e^x = 2^(r log2 e) * 2^j with
// ex2.approx (2^-22 relative error) and the power of two applied in two halves
// (so that results near overflow and in the subnormal range are right). Within
// 2 ulp of the correctly rounded result; CUDA's expf is within 2 ulp too, so
// results may differ from CUDA's in the last bit or two.
//
// logf and log1pf: see accurateLogf and accurateLog1pf below.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <functional>
#include <limits>

using namespace mlir;
using namespace mlir::tile;

static Value accurateExpf(OpBuilder &b, Location loc, Value x) {
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  auto f = [&](float v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v)).getResult();
  };
  auto i = [&](int32_t v) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v))
        .getResult();
  };
  const float log2e = 1.44269504088896341f;
  const float ln2Hi = 0.693145751953125f;     // 0x3f317200: 16 bits
  const float ln2Lo = 1.428606765330187e-06f; // ln 2 - ln2Hi
  Value t = arith::MulFOp::create(b, loc, x, f(log2e));
  t = arith::MaxNumFOp::create(b, loc, t, f(-252.0f));
  t = arith::MinNumFOp::create(b, loc, t, f(254.0f));
  // Round to nearest even: adding and subtracting 1.5 * 2^23 leaves no
  // fraction bits (|t| < 2^22; GPUToNVVM takes llvm.roundeven to libdevice).
  const float magic = 12582912.0f;
  Value j = arith::SubFOp::create(
      b, loc, arith::AddFOp::create(b, loc, t, f(magic)), f(magic));
  Value negJ = arith::NegFOp::create(b, loc, j);
  Value r = LLVM::FMAOp::create(b, loc, negJ, f(ln2Hi), x);
  r = LLVM::FMAOp::create(b, loc, negJ, f(ln2Lo), r);
  Value p = arith::MulFOp::create(b, loc, r, f(log2e));
  Value e = LLVM::CallIntrinsicOp::create(
                b, loc, f32, b.getStringAttr("llvm.nvvm.ex2.approx.f32"),
                ValueRange{p})
                .getResult(0);
  Value ji = arith::FPToSIOp::create(b, loc, i32, j);
  Value j1 = arith::ShRSIOp::create(b, loc, ji, i(1));
  Value j2 = arith::SubIOp::create(b, loc, ji, j1);
  auto pow2 = [&](Value k) {
    Value bits = arith::ShLIOp::create(
        b, loc, arith::AddIOp::create(b, loc, k, i(127)), i(23));
    return arith::BitcastOp::create(b, loc, f32, bits).getResult();
  };
  Value y = arith::MulFOp::create(b, loc, e, pow2(j1));
  return arith::MulFOp::create(b, loc, y, pow2(j2));
}

namespace {
/// f32 constants and arithmetic for the scalar math functions.
struct F32 {
  OpBuilder &b;
  Location loc;
  Value c(float v) const {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value i(int32_t v) const {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  }
  Value add(Value x, Value y) const {
    return arith::AddFOp::create(b, loc, x, y);
  }
  Value sub(Value x, Value y) const {
    return arith::SubFOp::create(b, loc, x, y);
  }
  Value mul(Value x, Value y) const {
    return arith::MulFOp::create(b, loc, x, y);
  }
  Value div(Value x, Value y) const {
    return arith::DivFOp::create(b, loc, x, y);
  }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) const {
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
  Value select(Value c, Value x, Value y) const {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
};
} // namespace

/// logf: x = 2^k m with m in [sqrt(2)/2, sqrt(2)) (subnormals scaled by 2^23
/// first), f = m - 1, s = f / (2 + f); log(1 + f) = 2 atanh(s) = f - f^2/2 +
/// s (f^2/2 + R(s^2)) with R a degree-4 minimax fit of the atanh series
/// (coefficients as in FreeBSD's e_logf), plus k ln 2 in two parts. Within
/// 1 ulp on normal inputs; log(0) = -inf, log(x < 0) = NaN, log(inf) = inf.
static Value accurateLogf(OpBuilder &b, Location loc, Value x) {
  F32 f{b, loc};
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  using P = arith::CmpFPredicate;
  Value subnormal = f.cmp(P::OLT, x, f.c(1.17549435e-38f));
  Value scaled = f.select(subnormal, f.mul(x, f.c(8388608.0f)), x);
  Value k0 = arith::SelectOp::create(b, loc, subnormal, f.i(-23), f.i(0));
  Value ix = arith::BitcastOp::create(b, loc, i32, scaled);
  // Move the cut between exponents from 1 to sqrt(2)/2 (0x3f3504f3).
  ix = arith::AddIOp::create(b, loc, ix, f.i(0x3f800000 - 0x3f3504f3));
  Value k = arith::SubIOp::create(
      b, loc, arith::ShRSIOp::create(b, loc, ix, f.i(23)), f.i(127));
  k = arith::AddIOp::create(b, loc, k, k0);
  Value mbits = arith::AddIOp::create(
      b, loc, arith::AndIOp::create(b, loc, ix, f.i(0x007fffff)),
      f.i(0x3f3504f3));
  Value m = arith::BitcastOp::create(b, loc, f32, mbits);
  Value r = f.sub(m, f.c(1.0f));
  Value s = f.div(r, f.add(f.c(2.0f), r));
  Value z = f.mul(s, s), w = f.mul(z, z);
  Value t1 =
      f.mul(w, f.add(f.c(0.40000972152f), f.mul(w, f.c(0.24279078841f))));
  Value t2 =
      f.mul(z, f.add(f.c(0.66666662693f), f.mul(w, f.c(0.28498786688f))));
  Value big = f.add(t2, t1);
  Value hfsq = f.mul(f.mul(f.c(0.5f), r), r);
  Value dk = arith::SIToFPOp::create(b, loc, f32, k);
  Value y =
      f.add(f.mul(s, f.add(hfsq, big)), f.mul(dk, f.c(9.0580006145e-06f)));
  y = f.add(f.sub(y, hfsq), r);
  y = f.add(y, f.mul(dk, f.c(6.9313812256e-01f)));
  // Edges: +inf stays, 0 gives -inf, negatives and NaN give NaN.
  const float inf = std::numeric_limits<float>::infinity();
  y = f.select(f.cmp(P::OEQ, x, f.c(inf)), x, y);
  y = f.select(f.cmp(P::OEQ, x, f.c(0.0f)), f.c(-inf), y);
  return f.select(f.cmp(P::OGE, x, f.c(0.0f)), y,
                  f.c(std::numeric_limits<float>::quiet_NaN()));
}

/// log1pf: u = 1 + x rounded, and log(1 + x) = log(u) - ((u - 1) - x) / u,
/// the second term correcting the rounding of u (exact for |x| < 2^-24,
/// where u = 1). log1p(-1) = -inf, log1p(inf) = inf, x < -1 gives NaN.
static Value accurateLog1pf(OpBuilder &b, Location loc, Value x) {
  F32 f{b, loc};
  using P = arith::CmpFPredicate;
  Value u = f.add(f.c(1.0f), x);
  Value err = f.sub(f.sub(u, f.c(1.0f)), x);
  Value finite = arith::AndIOp::create(
      b, loc, f.cmp(P::ONE, u, f.c(0.0f)),
      f.cmp(P::ONE, u, f.c(std::numeric_limits<float>::infinity())));
  Value correction = f.select(finite, f.div(err, u), f.c(0.0f));
  return f.sub(accurateLogf(b, loc, u), correction);
}

namespace {

/// An f32 math op computed element by element by `scalar` (on a scalar, or
/// on each element of a vector).
using ScalarF32Fn = std::function<Value(OpBuilder &, Location, Value)>;

template <typename OpTy>
struct ScalarizedF32Lowering : OpConversionPattern<OpTy> {
  ScalarizedF32Lowering(const TypeConverter &tc, MLIRContext *ctx,
                        ScalarF32Fn scalar)
      : OpConversionPattern<OpTy>(tc, ctx), scalar(std::move(scalar)) {}
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value in = adaptor.getOperand();
    if (!getElementTypeOrSelf(in.getType()).isF32())
      return op.emitOpError() << "is supported on f32 only";
    auto vecType = dyn_cast<VectorType>(in.getType());
    if (!vecType) {
      rewriter.replaceOp(op, scalar(rewriter, loc, in));
      return success();
    }
    SmallVector<Value> elements;
    for (int64_t k = 0; k < vecType.getNumElements(); ++k)
      elements.push_back(
          scalar(rewriter, loc,
                 vector::ExtractOp::create(rewriter, loc, in, k).getResult()));
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, vecType, elements);
    return success();
  }

  ScalarF32Fn scalar;
};

/// One call of an f32 -> f32 NVVM intrinsic.
ScalarF32Fn intrinsic(std::string name) {
  return [name](OpBuilder &b, Location loc, Value x) -> Value {
    return LLVM::CallIntrinsicOp::create(b, loc, b.getF32Type(),
                                         b.getStringAttr(name), ValueRange{x})
        .getResult(0);
  };
}

/// |x| of floats: clear the sign bit (GPUToNVVM takes llvm.fabs, too, to
/// libdevice).
struct AbsFLowering : OpConversionPattern<math::AbsFOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(math::AbsFOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getOperand();
    Type type = x.getType();
    unsigned width = getElementTypeOrSelf(type).getIntOrFloatBitWidth();
    Type intType = rewriter.getIntegerType(width);
    if (auto vec = dyn_cast<VectorType>(type))
      intType = VectorType::get(vec.getShape(), intType);
    Value bits = arith::BitcastOp::create(rewriter, loc, intType, x);
    APInt magnitude = APInt::getSignedMaxValue(width);
    TypedAttr maskAttr =
        isa<VectorType>(intType)
            ? TypedAttr(
                  DenseElementsAttr::get(cast<ShapedType>(intType), magnitude))
            : TypedAttr(rewriter.getIntegerAttr(intType, magnitude));
    Value mask = arith::ConstantOp::create(rewriter, loc, maskAttr);
    Value cleared = arith::AndIOp::create(rewriter, loc, bits, mask);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, type, cleared);
    return success();
  }
};

/// |x| of integers: x < 0 ? -x : x.
struct AbsILowering : OpConversionPattern<math::AbsIOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(math::AbsIOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getOperand();
    Value zero = arith::ConstantOp::create(rewriter, loc, x.getType(),
                                           rewriter.getZeroAttr(x.getType()));
    Value negative = arith::CmpIOp::create(rewriter, loc,
                                           arith::CmpIPredicate::slt, x, zero);
    Value negated = arith::SubIOp::create(rewriter, loc, zero, x);
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, negative, negated, x);
    return success();
  }
};

/// fma(a, b, c) rounded once, as LLVM's fma intrinsic (fma.rn.f32).
struct FmaLowering : OpConversionPattern<math::FmaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(math::FmaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<LLVM::FMAOp>(op, adaptor.getA(), adaptor.getB(),
                                             adaptor.getC());
    return success();
  }
};

} // namespace

void mlir::tile::populateMathToGPUPatterns(const TypeConverter &converter,
                                           RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<AbsFLowering, AbsILowering, FmaLowering>(converter, ctx);
  patterns.add<ScalarizedF32Lowering<math::ExpOp>>(converter, ctx,
                                                   accurateExpf);
  patterns.add<ScalarizedF32Lowering<math::LogOp>>(converter, ctx,
                                                   accurateLogf);
  patterns.add<ScalarizedF32Lowering<math::Log1pOp>>(converter, ctx,
                                                     accurateLog1pf);
  // sqrt is the IEEE, correctly rounded sqrt.rn.f32; rsqrt is
  // rsqrt.approx.f32 (as CUDA's rsqrtf, within 2 ulp; there is no IEEE rsqrt).
  patterns.add<ScalarizedF32Lowering<math::SqrtOp>>(
      converter, ctx, intrinsic("llvm.nvvm.sqrt.rn.f"));
  patterns.add<ScalarizedF32Lowering<math::RsqrtOp>>(
      converter, ctx, intrinsic("llvm.nvvm.rsqrt.approx.f"));
}
