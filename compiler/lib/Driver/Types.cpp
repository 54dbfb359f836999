//===- Types.cpp - tilejit dtypes as MLIR types, and back ----------------===//
#include "KernelImpl.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

Type tilejit::toMLIRType(MLIRContext *ctx, DType dtype) {
  switch (dtype) {
  case DType::f32:
    return Float32Type::get(ctx);
  case DType::f16:
    return Float16Type::get(ctx);
  case DType::bf16:
    return BFloat16Type::get(ctx);
  case DType::e4m3:
    return Float8E4M3FNType::get(ctx);
  case DType::e5m2:
    return Float8E5M2Type::get(ctx);
  case DType::i8:
  case DType::u8:
    return IntegerType::get(ctx, 8);
  case DType::i32:
  case DType::u32:
    return IntegerType::get(ctx, 32);
  case DType::i64:
  case DType::u64:
    return IntegerType::get(ctx, 64);
  case DType::f64:
    return Float64Type::get(ctx);
  case DType::boolean: // one byte in memory
    return IntegerType::get(ctx, 8);
  }
  return {};
}

std::optional<tilejit::DType> tilejit::fromMLIRType(Type type) {
  if (type.isF32())
    return DType::f32;
  if (type.isF16())
    return DType::f16;
  if (type.isBF16())
    return DType::bf16;
  if (isa<Float8E4M3FNType>(type))
    return DType::e4m3;
  if (isa<Float8E5M2Type>(type))
    return DType::e5m2;
  if (type.isInteger(8))
    return DType::i8;
  if (type.isInteger(32))
    return DType::i32;
  if (type.isInteger(64))
    return DType::i64;
  return std::nullopt;
}
