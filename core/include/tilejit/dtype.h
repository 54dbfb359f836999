// dtype.h - Element types of tensors and kernels, with their names and sizes.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace tilejit {

/// Element type of a tensor. Names follow PyTorch's short forms.
enum class DType {
  f32,
  f16,
  bf16,
  e4m3, // float8_e4m3fn
  e5m2, // float8_e5m2
  i8,
  u8,
  i32,
  i64,
  // Host-side types the references and some ops' outputs use.
  f64,
  u32,
  u64,
  boolean, // "bool", one byte
};

/// Size of one element in bytes.
constexpr std::size_t size_of(DType t) {
  switch (t) {
  case DType::f32:
  case DType::i32:
    return 4;
  case DType::f16:
  case DType::bf16:
    return 2;
  case DType::e4m3:
  case DType::e5m2:
  case DType::i8:
  case DType::u8:
    return 1;
  case DType::i64:
  case DType::f64:
  case DType::u64:
    return 8;
  case DType::u32:
    return 4;
  case DType::boolean:
    return 1;
  }
  return 0;
}

/// The name used on the command line and in messages ("bf16", "e4m3", ...).
constexpr std::string_view name_of(DType t) {
  switch (t) {
  case DType::f32:
    return "f32";
  case DType::f16:
    return "f16";
  case DType::bf16:
    return "bf16";
  case DType::e4m3:
    return "e4m3";
  case DType::e5m2:
    return "e5m2";
  case DType::i8:
    return "i8";
  case DType::u8:
    return "u8";
  case DType::i32:
    return "i32";
  case DType::i64:
    return "i64";
  case DType::f64:
    return "f64";
  case DType::u32:
    return "u32";
  case DType::u64:
    return "u64";
  case DType::boolean:
    return "bool";
  }
  return "?";
}

inline constexpr DType kAllDTypes[] = {
    DType::f32, DType::f16, DType::bf16,   DType::e4m3, DType::e5m2,
    DType::i8,  DType::u8,  DType::i32,    DType::i64,  DType::f64,
    DType::u32, DType::u64, DType::boolean};

/// Parses a name printed by `name_of`; also accepts "fp32", "float32",
/// "bfloat16", "fp8", "float8_e4m3fn". Returns nullopt for anything else.
constexpr std::optional<DType> parse_dtype(std::string_view s) {
  for (DType t : kAllDTypes)
    if (s == name_of(t))
      return t;
  if (s == "fp32" || s == "float32" || s == "float")
    return DType::f32;
  if (s == "fp16" || s == "float16" || s == "half")
    return DType::f16;
  if (s == "bfloat16")
    return DType::bf16;
  if (s == "fp8" || s == "float8_e4m3fn" || s == "fp8_e4m3")
    return DType::e4m3;
  if (s == "float8_e5m2" || s == "fp8_e5m2")
    return DType::e5m2;
  if (s == "int8")
    return DType::i8;
  if (s == "uint8")
    return DType::u8;
  if (s == "int32")
    return DType::i32;
  if (s == "int64")
    return DType::i64;
  if (s == "float64" || s == "double")
    return DType::f64;
  if (s == "uint32")
    return DType::u32;
  if (s == "uint64")
    return DType::u64;
  return std::nullopt;
}

} // namespace tilejit
