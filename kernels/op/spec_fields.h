// spec_fields.h - TILEJIT_SPEC_FIELDS: a kernel spec's fields named once,
// from which its specialisation key is built. A static_assert fails when a
// field of the struct is left out of the list.
#pragma once

#include "tilejit/dtype.h"
#include "tilejit/runtime/spec_key.h"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

namespace tilejit::ops {

/// A spec field's text in the key: a dtype by name, a number in decimal.
template <class T> std::string field_text(const T &value) {
  if constexpr (std::is_same_v<T, DType>)
    return std::string(name_of(value));
  else if constexpr (std::is_enum_v<T>)
    return std::to_string(static_cast<std::underlying_type_t<T>>(value));
  else
    return std::to_string(value);
}

/// Sets an integer spec field to `value` (TILEJIT_TUNE); false for a field
/// of another type (a dtype, an enum) or a value it cannot hold.
template <class T> bool set_field(T &field, int64_t value) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (value < 0 ? value < static_cast<int64_t>(std::numeric_limits<T>::min())
                  : static_cast<uint64_t>(value) >
                        static_cast<uint64_t>(std::numeric_limits<T>::max()))
      return false;
    field = static_cast<T>(value);
    return true;
  } else {
    (void)field;
    (void)value;
    return false;
  }
}

} // namespace tilejit::ops

#define TILEJIT_FE_1(m, s, x) m(s, x)
#define TILEJIT_FE_2(m, s, x, ...) m(s, x) TILEJIT_FE_1(m, s, __VA_ARGS__)
#define TILEJIT_FE_3(m, s, x, ...) m(s, x) TILEJIT_FE_2(m, s, __VA_ARGS__)
#define TILEJIT_FE_4(m, s, x, ...) m(s, x) TILEJIT_FE_3(m, s, __VA_ARGS__)
#define TILEJIT_FE_5(m, s, x, ...) m(s, x) TILEJIT_FE_4(m, s, __VA_ARGS__)
#define TILEJIT_FE_6(m, s, x, ...) m(s, x) TILEJIT_FE_5(m, s, __VA_ARGS__)
#define TILEJIT_FE_7(m, s, x, ...) m(s, x) TILEJIT_FE_6(m, s, __VA_ARGS__)
#define TILEJIT_FE_8(m, s, x, ...) m(s, x) TILEJIT_FE_7(m, s, __VA_ARGS__)
#define TILEJIT_FE_9(m, s, x, ...) m(s, x) TILEJIT_FE_8(m, s, __VA_ARGS__)
#define TILEJIT_FE_10(m, s, x, ...) m(s, x) TILEJIT_FE_9(m, s, __VA_ARGS__)
#define TILEJIT_FE_11(m, s, x, ...) m(s, x) TILEJIT_FE_10(m, s, __VA_ARGS__)
#define TILEJIT_FE_12(m, s, x, ...) m(s, x) TILEJIT_FE_11(m, s, __VA_ARGS__)
#define TILEJIT_FE_13(m, s, x, ...) m(s, x) TILEJIT_FE_12(m, s, __VA_ARGS__)
#define TILEJIT_FE_14(m, s, x, ...) m(s, x) TILEJIT_FE_13(m, s, __VA_ARGS__)
#define TILEJIT_FE_15(m, s, x, ...) m(s, x) TILEJIT_FE_14(m, s, __VA_ARGS__)
#define TILEJIT_FE_16(m, s, x, ...) m(s, x) TILEJIT_FE_15(m, s, __VA_ARGS__)
#define TILEJIT_FE_17(m, s, x, ...) m(s, x) TILEJIT_FE_16(m, s, __VA_ARGS__)
#define TILEJIT_FE_18(m, s, x, ...) m(s, x) TILEJIT_FE_17(m, s, __VA_ARGS__)
#define TILEJIT_FE_19(m, s, x, ...) m(s, x) TILEJIT_FE_18(m, s, __VA_ARGS__)
#define TILEJIT_FE_20(m, s, x, ...) m(s, x) TILEJIT_FE_19(m, s, __VA_ARGS__)
#define TILEJIT_FE_21(m, s, x, ...) m(s, x) TILEJIT_FE_20(m, s, __VA_ARGS__)
#define TILEJIT_FE_22(m, s, x, ...) m(s, x) TILEJIT_FE_21(m, s, __VA_ARGS__)
#define TILEJIT_FE_23(m, s, x, ...) m(s, x) TILEJIT_FE_22(m, s, __VA_ARGS__)
#define TILEJIT_FE_24(m, s, x, ...) m(s, x) TILEJIT_FE_23(m, s, __VA_ARGS__)
#define TILEJIT_FE_PICK(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12,     \
                        _13, _14, _15, _16, _17, _18, _19, _20, _21, _22, _23, \
                        _24, NAME, ...)                                        \
  NAME
#define TILEJIT_FOR_EACH(m, s, ...)                                            \
  TILEJIT_FE_PICK(__VA_ARGS__, TILEJIT_FE_24, TILEJIT_FE_23, TILEJIT_FE_22,    \
                  TILEJIT_FE_21, TILEJIT_FE_20, TILEJIT_FE_19, TILEJIT_FE_18,  \
                  TILEJIT_FE_17, TILEJIT_FE_16, TILEJIT_FE_15, TILEJIT_FE_14,  \
                  TILEJIT_FE_13, TILEJIT_FE_12, TILEJIT_FE_11, TILEJIT_FE_10,  \
                  TILEJIT_FE_9, TILEJIT_FE_8, TILEJIT_FE_7, TILEJIT_FE_6,      \
                  TILEJIT_FE_5, TILEJIT_FE_4, TILEJIT_FE_3, TILEJIT_FE_2,      \
                  TILEJIT_FE_1)                                                \
  (m, s, __VA_ARGS__)
#define TILEJIT_FIELD_KEY(s, x) key.add(#x, ::tilejit::ops::field_text(s.x));
#define TILEJIT_FIELD_SIZE(S, x) +sizeof(S::x)
#define TILEJIT_FIELD_SET(s, x)                                                \
  if (field == #x)                                                             \
    return ::tilejit::ops::set_field(s.x, value);
#define TILEJIT_FIELD_NAME(s, x) names += names.empty() ? #x : ", " #x;

/// Lists every field of the spec struct `Spec` (a struct of 32-bit fields
/// that the op's kernel table compares bytewise) once, defining
/// `add_spec_fields(key, spec)`, `set_spec_field(spec, field, value)` and
/// `spec_field_names(spec)` (TILEJIT_TUNE, op/tuning.h):
///
///   TILEJIT_SPEC_FIELDS(TopkGateSpec, num_experts, num_topk, block_t)
#define TILEJIT_SPEC_FIELDS(Spec, ...)                                         \
  static_assert(sizeof(Spec) ==                                                \
                    0 TILEJIT_FOR_EACH(TILEJIT_FIELD_SIZE, Spec, __VA_ARGS__), \
                "TILEJIT_SPEC_FIELDS(" #Spec                                   \
                ", ...) must list every field of the struct once");            \
  inline void add_spec_fields(::tilejit::rt::SpecKey &key, const Spec &spec) { \
    TILEJIT_FOR_EACH(TILEJIT_FIELD_KEY, spec, __VA_ARGS__)                     \
  }                                                                            \
  inline bool set_spec_field(Spec &spec, std::string_view field,               \
                             int64_t value) {                                  \
    TILEJIT_FOR_EACH(TILEJIT_FIELD_SET, spec, __VA_ARGS__)                     \
    return false;                                                              \
  }                                                                            \
  inline std::string spec_field_names(const Spec &) {                          \
    std::string names;                                                         \
    TILEJIT_FOR_EACH(TILEJIT_FIELD_NAME, spec, __VA_ARGS__)                    \
    return names;                                                              \
  }
