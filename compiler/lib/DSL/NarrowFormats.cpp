//===- NarrowFormats.cpp - DSL codes of fp4 e2m1 and E5M6, and packing ---===//
//
// Formats with no MLIR type, built from the DSL's own integer and float
// calls (and E5M6's fp16 truncation, an arith.truncf toward zero that the
// GPU does in one instruction a pair): encoders give codes in unsigned
// integers, packers put several codes into one byte or word, decoders give
// f32 values. Each matches its reference in kernels/common/convert.h bit
// for bit.
//
//===----------------------------------------------------------------------===//
#include "BuilderImpl.h"

#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace tilejit::dsl {

namespace {

/// The fp16 bits (u32) of f32 values rounded toward zero
/// (__float2half_rz: finite overflow to 65504, infinities kept, fp16
/// subnormals truncated), with a NaN's as 0x7E00: arith.truncf toward_zero
/// (cvt.rz.f16x2.f32 a pair, CastToGPU.cpp; the H200 gives 0x7FFF for
/// every NaN), then a signed 16-bit min with 0x7E00 (min.s16x2 a pair),
/// which keeps every finite value and infinity (at most 0x7C00, or
/// negative).
mlir::Value halfBitsTowardZero(mlir::OpBuilder &b, mlir::Location l,
                               mlir::Value v) {
  auto with = [&](mlir::Type elt) { return withElementType(v.getType(), elt); };
  mlir::Value half = mlir::arith::TruncFOp::create(
      b, l, with(b.getF16Type()), v,
      mlir::arith::RoundingModeAttr::get(
          b.getContext(), mlir::arith::RoundingMode::toward_zero),
      mlir::arith::FastMathFlagsAttr{});
  mlir::Value bits =
      mlir::arith::BitcastOp::create(b, l, with(b.getI16Type()), half);
  mlir::Value limit = mlir::arith::ConstantOp::create(
      b, l, b.getIntegerAttr(b.getI16Type(), 0x7E00));
  if (mlir::isa<mlir::RankedTensorType>(v.getType()))
    limit = mlir::tile::SplatOp::create(
        b, l, mlir::cast<mlir::RankedTensorType>(with(b.getI16Type())), limit);
  mlir::Value clamped = mlir::arith::MinSIOp::create(b, l, bits, limit);
  return mlir::arith::ExtUIOp::create(b, l, with(b.getI32Type()), clamped);
}

/// The f32 value of fp16 bits (the low 16 of u32 `v`): exact, by
/// cvt.f32.f16 (a NaN's payload is the hardware's).
mlir::Value halfToFloat(mlir::OpBuilder &b, mlir::Location l, mlir::Value v) {
  auto with = [&](mlir::Type elt) { return withElementType(v.getType(), elt); };
  mlir::Value bits =
      mlir::arith::TruncIOp::create(b, l, with(b.getI16Type()), v);
  mlir::Value half =
      mlir::arith::BitcastOp::create(b, l, with(b.getF16Type()), bits);
  return mlir::arith::ExtFOp::create(b, l, with(b.getF32Type()), half);
}

} // namespace

Value KernelBuilder::to_e2m1(Value a, E2m1Encode how, Loc loc) {
  if (!a.valid())
    impl_->fail(loc, "cannot convert an empty dsl::Value to e2m1");
  if (a.dtype() != DType::f32)
    impl_->fail(loc, fmt::format("to_e2m1: the values must be f32, got {}",
                                 name_of(a.dtype())));
  // Magnitude codes 0..7 are 0, 0.5, 1, 1.5, 2, 3, 4, 6, rounded to
  // nearest even, saturating; NaN is 7 and the sign is bit 3. Two paths,
  // about 12 instructions an element where counting the seven midpoints
  // below |x| took 26 (an e2m1 cast was ALU-bound):
  // - |x| >= 1 (2^0..2^2, one mantissa bit): the f32 bits rounded to
  //   mantissa bit 22 to nearest even (+ 0x1FFFFF + that bit), shifted: the
  //   code is exponent and bit, (e - 127) x 2 + 2 + m, so the bias and the
  //   rounding fold into one constant; past 6 (infinities and NaN too) it
  //   is at least 8 and min saturates it to 7;
  // - |x| < 1 (steps of 0.5): 2|x| rounded to an integer by the fma's RNE
  //   into 2^23's last place, so the f32 bits are 0x4B000000 + code and the
  //   final cast to u8 drops the 0x4B.
  // Checked against kernels/common/convert.h's f32_to_e2m1 on every f32
  // bit pattern (and on the GPU by tests/gpu/dsl_cast_gpu_test.cpp).
  auto u32 = [&](int64_t v) { return constant(v, DType::u32, loc); };
  Value bits = bitcast(a, DType::u32, loc);
  if (how == E2m1Encode::least) {
    // The codes 0..4 of |x| < 2 are RN(2|x|) (steps of 0.5), 4..6 of |x|
    // in [2, 4) RN(|x|) + 2, 6..7 of |x| >= 4 RN(|x| / 2) + 4: each an
    // fma into 2^23's last place (f32 bits 0x4B000000 + code; RNE's ties
    // to even codes are e2m1's), and each the least of the three in its
    // own range; min with 7 saturates (infinities and NaN too: their bits
    // are past 0x4B000007). Checked against f32_to_e2m1 on every f32 bit
    // pattern (a C++ mirror, session 68).
    Value m = abs(a, loc);
    auto rounded = [&](double scale, double magic) {
      return bitcast(fma(m, constant(scale, DType::f32, loc),
                         constant(magic, DType::f32, loc), loc),
                     DType::u32, loc);
    };
    Value code = min(min(rounded(2.0, 8388608.0), rounded(1.0, 8388610.0), loc),
                     min(rounded(0.5, 8388612.0), u32(0x4B000007), loc), loc);
    Value sign = bit_and(shr(bits, u32(28), loc), u32(8), loc);
    return cast(bit_or(code, sign, loc), DType::u8, loc); // 0x4B drops
  }
  Value mag = bit_and(bits, u32(0x7FFFFFFF), loc);
  Value odd = bit_and(shr(mag, u32(22), loc), u32(1), loc);
  // 0xC11FFFFF = 0x1FFFFF - (252 << 22), modulo 2^32.
  Value normal =
      min(shr(add(add(mag, odd, loc), u32(0xC11FFFFF), loc), u32(22), loc),
          u32(7), loc);
  Value small = bitcast(fma(abs(a, loc), constant(2.0, DType::f32, loc),
                            constant(8388608.0, DType::f32, loc), loc),
                        DType::u32, loc);
  Value code = select(lt(mag, u32(0x3F800000), loc), small, normal, loc);
  Value sign = bit_and(shr(bits, u32(28), loc), u32(8), loc);
  return cast(bit_or(code, sign, loc), DType::u8, loc);
}

Value KernelBuilder::pack_nibbles(Value codes, Loc loc) {
  if (!codes.valid())
    impl_->fail(loc, "cannot pack the nibbles of an empty dsl::Value");
  std::vector<int64_t> shape = codes.shape();
  if (shape.empty() || shape.back() % 2 != 0)
    impl_->fail(loc, fmt::format("pack_nibbles: the last dimension must have "
                                 "an even size, got shape {}",
                                 fmt::join(shape, "x")));
  if (codes.dtype() != DType::u8)
    impl_->fail(loc, fmt::format("pack_nibbles: the codes must be u8, got {}",
                                 name_of(codes.dtype())));
  std::vector<int64_t> pairs = shape;
  pairs.back() /= 2;
  pairs.push_back(2);
  // Shift element 2j + 1 by 4 and add the pair (the bits do not overlap).
  Value wide = reshape(cast(codes, DType::u32, loc), pairs, loc);
  Value shift =
      shl(cast(iota(pairs, static_cast<int>(pairs.size()) - 1, DType::u32, loc),
               DType::u32, loc),
          constant(2, DType::u32), loc);
  Value low = bit_and(wide, constant(15, DType::u32), loc);
  Value packed =
      reduce_sum(shl(low, shift, loc), static_cast<int>(pairs.size()) - 1, loc);
  pairs.pop_back();
  return cast(reshape(packed, pairs, loc), DType::u8, loc);
}

Value KernelBuilder::from_e2m1(Value codes, E2m1Decode how, Loc loc) {
  if (!codes.valid())
    impl_->fail(loc, "cannot convert an empty dsl::Value from e2m1");
  if (codes.dtype() != DType::u8)
    impl_->fail(loc, fmt::format("from_e2m1: the codes must be u8, got {}",
                                 name_of(codes.dtype())));
  auto u32 = [&](int64_t v) { return constant(v, DType::u32, loc); };
  Value c = cast(codes, DType::u32, loc);
  if (how == E2m1Decode::multiply) {
    // Code s eem as f32 bits eem << 22 is the value times 2^-126 (e = 0, m
    // = 1 the subnormal 2^-127, e > 0 the normal (1 + m / 2) 2^(e - 127)),
    // so one exact multiply by 2^126 decodes it (the kernels keep f32
    // subnormals: no .ftz); the sign goes to bit 31.
    Value bits = bit_or(shl(bit_and(c, u32(7), loc), u32(22), loc),
                        shl(bit_and(c, u32(8), loc), u32(28), loc), loc);
    return mul(bitcast(bits, DType::f32, loc),
               constant(0x1p126, DType::f32, loc), loc);
  }
  // Code s eem: e = 0 is the subnormal 0 or 0.5 (f32 bits 0x3F000000),
  // e > 0 is (1 + m / 2) * 2^(e - 1): exponent field e + 126, m the top
  // mantissa bit. The sign goes to bit 31.
  Value e = bit_and(shr(c, u32(1), loc), u32(3), loc);
  Value m = bit_and(c, u32(1), loc);
  Value normal = bit_or(shl(add(e, u32(126), loc), u32(23), loc),
                        shl(m, u32(22), loc), loc);
  Value subnormal = select(eq(m, u32(0), loc), u32(0), u32(0x3F000000), loc);
  Value magnitude = select(eq(e, u32(0), loc), subnormal, normal, loc);
  Value sign = shl(bit_and(shr(c, u32(3), loc), u32(1), loc), u32(31), loc);
  return bitcast(bit_or(magnitude, sign, loc), DType::f32, loc);
}

Value KernelBuilder::unpack_nibbles(Value bytes, Loc loc) {
  if (!bytes.valid())
    impl_->fail(loc, "cannot unpack the nibbles of an empty dsl::Value");
  std::vector<int64_t> shape = bytes.shape();
  if (shape.empty())
    impl_->fail(loc, "unpack_nibbles: the bytes must be a fragment, got a "
                     "scalar");
  if (bytes.dtype() != DType::u8)
    impl_->fail(loc, fmt::format("unpack_nibbles: the bytes must be u8, got {}",
                                 name_of(bytes.dtype())));
  std::vector<int64_t> single = shape;
  single.push_back(1);
  auto u8 = [&](int64_t v) { return constant(v, DType::u8, loc); };
  Value low = reshape(bit_and(bytes, u8(15), loc), single, loc);
  Value high = reshape(shr(bytes, u8(4), loc), single, loc);
  std::vector<int64_t> out = shape;
  out.back() *= 2;
  return reshape(stack({low, high}, loc), out, loc);
}

Value KernelBuilder::to_e5m6(Value a, Loc loc) {
  if (!a.valid())
    impl_->fail(loc, "cannot convert an empty dsl::Value to e5m6");
  if (a.dtype() != DType::f32)
    impl_->fail(loc, fmt::format("to_e5m6: the values must be f32, got {}",
                                 name_of(a.dtype())));
  auto u32 = [&](int64_t v) { return constant(v, DType::u32, loc); };
  // h = the fp16 bits of a rounded toward zero (__float2half_rz), a NaN's
  // 0x7E00 (the reference's: no sign).
  Value bits = bitcast(a, DType::u32, loc);
  Value h = impl_->wrap(
      halfBitsTowardZero(impl_->builder, impl_->loc(loc), unwrap(a)),
      DType::u32);
  // The top 12 bits, rounded by the f32's 17 low bits (spec 2.4's rule,
  // with its quirk for fp16 subnormals).
  // Up when (code & 1) + rem > 0x10000, as an integer: the sum plus 0xFFFF
  // reaches bit 17 exactly then (it is at most 0x2FFFF).
  Value code = shr(h, u32(4), loc);
  Value rem = bit_and(bits, u32(0x1FFFF), loc);
  Value up =
      shr(add(add(bit_and(code, u32(1), loc), rem, loc), u32(0xFFFF), loc),
          u32(17), loc);
  return bit_and(add(code, up, loc), u32(0xFFF), loc);
}

Value KernelBuilder::from_e5m6(Value codes, Loc loc) {
  if (!codes.valid())
    impl_->fail(loc, "cannot convert an empty dsl::Value from e5m6");
  if (codes.dtype() != DType::u32)
    impl_->fail(loc, fmt::format("from_e5m6: the codes must be u32, got {}",
                                 name_of(codes.dtype())));
  // The code is the top 12 bits of an fp16 (normals, subnormals m x 2^-20,
  // infinities and NaNs alike), whose f32 value is exact.
  Value half = shl(codes, constant(4, DType::u32, loc), loc);
  return impl_->wrap(halfToFloat(impl_->builder, impl_->loc(loc), unwrap(half)),
                     DType::f32);
}

Value KernelBuilder::pack_e5m6(Value codes, Loc loc) {
  if (!codes.valid())
    impl_->fail(loc, "cannot pack an empty dsl::Value as e5m6");
  std::vector<int64_t> shape = codes.shape();
  if (shape.empty() || shape.back() % 8 != 0)
    impl_->fail(loc, fmt::format("pack_e5m6: the last dimension must be a "
                                 "multiple of 8, got shape {}",
                                 fmt::join(shape, "x")));
  if (codes.dtype() != DType::u32)
    impl_->fail(loc, fmt::format("pack_e5m6: the codes must be u32, got {}",
                                 name_of(codes.dtype())));
  // Codes c0 .. c7 of a group are one 96-bit big-endian string: ci's lowest
  // bit is bit 84 - 12 i of it, and word w holds bits 64 - 32 w up. A code
  // reaches word w shifted left by s = 84 - 12 i - (64 - 32 w) when s >= 0,
  // right by -s when s < 0; the parts of a word do not overlap, so a sum
  // over the group assembles it.
  std::vector<int64_t> groups = shape;
  groups.back() /= 8;
  groups.push_back(8);
  const int last = static_cast<int>(groups.size()) - 1;
  auto i32 = [&](int64_t v) { return constant(v, DType::i32, loc); };
  auto u32 = [&](int64_t v) { return constant(v, DType::u32, loc); };
  Value c = reshape(bit_and(codes, u32(0xFFF), loc), groups, loc);
  Value lowest =
      sub(i32(84), mul(iota(groups, last, DType::i32, loc), i32(12), loc), loc);
  std::vector<Value> words;
  for (int w = 0; w < 3; ++w) {
    Value s = sub(lowest, i32(64 - 32 * w), loc);
    auto amount = [&](Value v) { // clamped to 0 .. 31, as u32
      v = select(lt(v, i32(0), loc), i32(0), v, loc);
      return cast(select(gt(v, i32(31), loc), i32(31), v, loc), DType::u32,
                  loc);
    };
    Value left =
        select(lt(s, i32(32), loc), shl(c, amount(s), loc), u32(0), loc);
    Value right = select(gt(s, i32(-12), loc),
                         shr(c, amount(sub(i32(0), s, loc)), loc), u32(0), loc);
    words.push_back(
        reduce_sum(select(ge(s, i32(0), loc), left, right, loc), last, loc));
  }
  std::vector<int64_t> out = shape;
  out.back() = out.back() / 8 * 3;
  return reshape(stack(words, loc), out, loc);
}

Value KernelBuilder::unpack_e5m6(Value words, Loc loc) {
  if (!words.valid())
    impl_->fail(loc, "cannot unpack an empty dsl::Value as e5m6");
  std::vector<int64_t> shape = words.shape();
  if (shape.empty() || shape.back() % 3 != 0)
    impl_->fail(loc, fmt::format("unpack_e5m6: the last dimension must be a "
                                 "multiple of 3, got shape {}",
                                 fmt::join(shape, "x")));
  if (words.dtype() != DType::u32)
    impl_->fail(loc, fmt::format("unpack_e5m6: the words must be u32, got {}",
                                 name_of(words.dtype())));
  // The three words of each group, as fragments of (..., n, 1).
  std::vector<int64_t> groups = shape;
  groups.back() /= 3;
  groups.push_back(3);
  std::vector<Value> w = unstack(reshape(words, groups, loc), loc);
  // Code i is bits 84 - 12 i .. 95 - 12 i of the big-endian 96-bit string;
  // word j holds bits 64 - 32 j up (see pack_e5m6): its part of the code is
  // the word shifted right by s = 84 - 12 i - (64 - 32 j), or left by -s.
  auto u32 = [&](int64_t v) { return constant(v, DType::u32, loc); };
  std::vector<Value> codes;
  for (int i = 0; i < 8; ++i) {
    Value code;
    for (int j = 0; j < 3; ++j) {
      const int s = 84 - 12 * i - (64 - 32 * j);
      if (s >= 32 || s <= -12)
        continue;
      Value part =
          bit_and(s >= 0 ? shr(w[j], u32(s), loc) : shl(w[j], u32(-s), loc),
                  u32(0xFFF), loc);
      code = code.valid() ? bit_or(code, part, loc) : part;
    }
    codes.push_back(code);
  }
  std::vector<int64_t> out = shape;
  out.back() = out.back() / 3 * 8;
  return reshape(stack(codes, loc), out, loc);
}

} // namespace tilejit::dsl
