//===- MathToGPU.cpp - Math functions without libdevice ------------------===//
//
// tilejit ships no libdevice (and GPUToNVVM would turn math ops, and LLVM
// intrinsics such as fabs, into calls to it), so every math op is lowered
// here to arithmetic NVPTX selects directly.
//
// expf, logf and log1pf are CUDA's own (libdevice's __nv_expf, __nv_logf,
// __nv_log1pf without flush-to-zero, as nvcc and torch compile them),
// instruction for instruction, so that results match CUDA's bit for bit: the
// quantisation ops compare TileKernels' outputs exactly, and those are
// rounded from values computed with these functions. The sequences were read
// off nvcc 13.0's PTX for sm_90a; tests/gpu/math_cuda_gpu_test.cpp checks
// every f32 input against that PTX.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <bit>
#include <functional>
#include <limits>

using namespace mlir;
using namespace mlir::tile;

namespace {
/// f32 and i32 constants and arithmetic for the scalar math functions, each
/// op rounded on its own (fma is one rounding, as fma.rn.f32).
struct F32 {
  OpBuilder &b;
  Location loc;
  Value c(float v) const {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  /// The f32 of these bits (the constants as nvcc's PTX writes them).
  Value bits(uint32_t v) const { return c(std::bit_cast<float>(v)); }
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
  Value fma(Value x, Value y, Value z) const {
    return LLVM::FMAOp::create(b, loc, x, y, z);
  }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) const {
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
  Value icmp(arith::CmpIPredicate p, Value x, Value y) const {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value select(Value c, Value x, Value y) const {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value toBits(Value x) const {
    return arith::BitcastOp::create(b, loc, b.getI32Type(), x);
  }
  Value fromBits(Value x) const {
    return arith::BitcastOp::create(b, loc, b.getF32Type(), x);
  }
  Value isub(Value x, Value y) const {
    return arith::SubIOp::create(b, loc, x, y);
  }
  Value iand(Value x, Value y) const {
    return arith::AndIOp::create(b, loc, x, y);
  }
  /// cvt.rn.f32.s32.
  Value toFloat(Value x) const {
    return arith::SIToFPOp::create(b, loc, b.getF32Type(), x);
  }
  /// One call of an f32 NVVM intrinsic.
  Value call(StringRef name, ValueRange args) const {
    return LLVM::CallIntrinsicOp::create(b, loc, b.getF32Type(),
                                         b.getStringAttr(name), args)
        .getResult(0);
  }
  /// c0 + t (c1 + t (c2 + ...)) by Horner's rule with fma, coefficients
  /// from the highest degree down.
  Value horner(Value t, std::initializer_list<uint32_t> coefficients) const {
    auto it = coefficients.begin();
    Value p = bits(*it++);
    for (; it != coefficients.end(); ++it)
      p = fma(p, t, bits(*it));
    return p;
  }
};
} // namespace

/// __nv_expf: n = floor(x log2 e) from a saturated fma rounded down (so n is
/// in [-126, 126]), r = x log2 e - n with log2 e in two parts, e^x =
/// ex2.approx.ftz(r) * 2^n, the power of two built from the bits of the
/// rounded-down value.
static Value cudaExpf(OpBuilder &b, Location loc, Value x) {
  F32 f{b, loc};
  Value t = f.fma(x, f.bits(0x3bbb989d), f.c(0.5f)); // log2 e / 252
  // cvt.sat.f32.f32: clamped to [0, 1], NaN to 0 (maxnum drops it).
  t = arith::MinNumFOp::create(
      b, loc, arith::MaxNumFOp::create(b, loc, t, f.c(0.0f)), f.c(1.0f));
  Value j = f.call("llvm.nvvm.fma.rm.f", {t, f.c(252.0f), f.bits(0x4b400001)});
  Value n = f.add(j, f.bits(0xcb40007f)); // the exponent, as a float
  Value r = f.fma(x, f.bits(0x3fb8aa3b), arith::NegFOp::create(b, loc, n));
  r = f.fma(x, f.bits(0x32a57060), r);
  Value scale = f.fromBits(
      arith::ShLIOp::create(b, loc, f.toBits(j), f.i(23)).getResult());
  return f.mul(f.call("llvm.nvvm.ex2.approx.ftz.f32", {r}), scale);
}

/// __nv_logf: subnormals scaled by 2^23, x = 2^e m with m in [2/3, 4/3) cut
/// at the bits of 0x3f2aaaab, log(x) = e ln 2 + p(m - 1), p a degree-9
/// polynomial; infinities, NaNs and negatives through fma(x, inf, inf), and
/// log(+-0) = -inf.
static Value cudaLogf(OpBuilder &b, Location loc, Value x) {
  F32 f{b, loc};
  using P = arith::CmpFPredicate;
  using IP = arith::CmpIPredicate;
  const float inf = std::numeric_limits<float>::infinity();
  Value subnormal = f.cmp(P::OLT, x, f.bits(0x00800000));
  Value scaled = f.select(subnormal, f.mul(x, f.bits(0x4b000000)), x);
  Value e0 = f.select(subnormal, f.c(-23.0f), f.c(0.0f));
  Value ix = f.toBits(scaled);
  Value ebits = f.iand(f.isub(ix, f.i(0x3f2aaaab)), f.i(0xff800000));
  Value m = f.fromBits(f.isub(ix, ebits));
  Value e = f.fma(f.toFloat(ebits), f.bits(0x34000000), e0);
  Value t = f.add(m, f.c(-1.0f));
  Value p =
      f.horner(t, {0xbe055027, 0x3e1039f6, 0xbdf8cdcc, 0x3e0f2955, 0xbe2ad8b9,
                   0x3e4ced0b, 0xbe7fff22, 0x3eaaaa78, 0xbf000000});
  Value y = f.fma(f.mul(t, p), t, t);
  y = f.fma(e, f.bits(0x3f317218), y);
  Value finite = f.icmp(IP::ult, ix, f.i(0x7f800000));
  y = f.select(finite, y, f.fma(scaled, f.c(inf), f.c(inf)));
  return f.select(f.cmp(P::OEQ, scaled, f.c(0.0f)), f.c(-inf), y);
}

/// __nv_log1pf: 1 + x rounded toward zero gives e with 1 + x = 2^e m, m - 1
/// = (2^-e - 1) + x 2^-e exactly, log1p(x) = e ln 2 + p(m - 1), p a
/// degree-9 polynomial; x < -1, infinities and NaNs through fma(x, inf, inf),
/// and log1p(-0) = -0.
static Value cudaLog1pf(OpBuilder &b, Location loc, Value x) {
  F32 f{b, loc};
  using P = arith::CmpFPredicate;
  using IP = arith::CmpIPredicate;
  const float inf = std::numeric_limits<float>::infinity();
  Value u = f.call("llvm.nvvm.add.rz.f", {x, f.c(1.0f)});
  Value ebits = f.iand(f.isub(f.toBits(u), f.i(0x3f400000)), f.i(0xff800000));
  Value ix = f.toBits(x);
  Value xs = f.fromBits(f.isub(ix, ebits));
  Value four = f.fromBits(f.isub(f.i(0x40800000), ebits));
  Value t = f.add(f.fma(f.c(0.25f), four, f.c(-1.0f)), xs);
  Value e = f.mul(f.toFloat(ebits), f.bits(0x34000000));
  Value p =
      f.horner(t, {0xbd39bf78, 0x3dd80012, 0xbe0778e0, 0x3e146475, 0xbe2a68dd,
                   0x3e4caf9e, 0xbe800042, 0x3eaaaae6, 0xbf000000});
  Value y = f.fma(f.mul(t, p), t, t);
  y = f.fma(e, f.bits(0x3f317218), y);
  // Not a finite x >= +0: -1 <= x <= -0 keeps y (then -0 gives -0), the
  // rest (x < -1, infinities, NaNs) gives fma(x, inf, inf).
  Value finite = f.icmp(IP::ult, ix, f.i(0x7f800000));
  Value atLeastMinusOne =
      f.icmp(IP::slt, ix, f.i(static_cast<int32_t>(0xbf800001u)));
  Value special = f.select(atLeastMinusOne, y, f.fma(x, f.c(inf), f.c(inf)));
  special = f.select(f.cmp(P::OEQ, x, f.c(0.0f)), f.c(-0.0f), special);
  return f.select(finite, y, special);
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

/// The number of set bits, as LLVM's ctpop intrinsic (popc.b32 / .b64).
struct CtPopLowering : OpConversionPattern<math::CtPopOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(math::CtPopOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<LLVM::CtPopOp>(op, adaptor.getOperand());
    return success();
  }
};

} // namespace

void mlir::tile::populateMathToGPUPatterns(const TypeConverter &converter,
                                           RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<AbsFLowering, AbsILowering, CtPopLowering, FmaLowering>(
      converter, ctx);
  patterns.add<ScalarizedF32Lowering<math::ExpOp>>(converter, ctx, cudaExpf);
  patterns.add<ScalarizedF32Lowering<math::LogOp>>(converter, ctx, cudaLogf);
  patterns.add<ScalarizedF32Lowering<math::Log1pOp>>(converter, ctx,
                                                     cudaLog1pf);
  // sqrt is the IEEE, correctly rounded sqrt.rn.f32; rsqrt is
  // rsqrt.approx.f32 (as CUDA's rsqrtf, within 2 ulp; there is no IEEE rsqrt).
  patterns.add<ScalarizedF32Lowering<math::SqrtOp>>(
      converter, ctx, intrinsic("llvm.nvvm.sqrt.rn.f"));
  patterns.add<ScalarizedF32Lowering<math::RsqrtOp>>(
      converter, ctx, intrinsic("llvm.nvvm.rsqrt.approx.f"));
}
