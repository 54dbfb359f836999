// validate.h - Argument checks shared by the Engram references; each failure
// throws UserError naming the function, the argument, the value and the
// requirement.
#pragma once

#include "common/host_tensor.h"
#include "tilejit/error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace tilejit::engram::detail {

using ref::HostTensor;

inline void check_dtype(std::string_view fn, std::string_view arg,
                        const HostTensor &t, DType want) {
  if (t.dtype() != want)
    throw UserError(fmt::format("{}: argument '{}' has dtype {}; requires {}",
                                fn, arg, name_of(t.dtype()), name_of(want)));
}

/// `t` must have exactly `want`; `what` names the dims, e.g. "[T, hc, D]".
inline void check_shape(std::string_view fn, std::string_view arg,
                        const HostTensor &t, const std::vector<int64_t> &want,
                        std::string_view what) {
  if (t.shape() != want)
    throw UserError(fmt::format("{}: argument '{}' has shape [{}]; requires "
                                "{} = [{}]",
                                fn, arg, fmt::join(t.shape(), ", "), what,
                                fmt::join(want, ", ")));
}

inline void check_rank(std::string_view fn, std::string_view arg,
                       const HostTensor &t, int want, std::string_view what) {
  if (t.rank() != want)
    throw UserError(fmt::format("{}: argument '{}' has shape [{}]; requires "
                                "rank {} {}",
                                fn, arg, fmt::join(t.shape(), ", "), want,
                                what));
}

inline void check_contiguous(std::string_view fn, std::string_view arg,
                             const HostTensor &t) {
  if (!t.is_contiguous())
    throw UserError(fmt::format("{}: argument '{}' has shape [{}] and strides "
                                "[{}]; requires a contiguous tensor",
                                fn, arg, fmt::join(t.shape(), ", "),
                                fmt::join(t.strides(), ", ")));
}

inline void check_unit_last_stride(std::string_view fn, std::string_view arg,
                                   const HostTensor &t) {
  int last = t.rank() - 1;
  if (t.numel() > 0 && t.shape()[last] > 1 && t.strides()[last] != 1)
    throw UserError(fmt::format(
        "{}: argument '{}' has shape [{}] and stride[{}]"
        " = {}; requires a contiguous last dimension",
        fn, arg, fmt::join(t.shape(), ", "), last, t.strides()[last]));
}

/// D is the hidden size; `multiple` the alignment the op needs.
inline void check_hidden_multiple(std::string_view fn, std::string_view arg,
                                  int64_t hidden, int64_t multiple) {
  if (hidden % multiple != 0 || hidden == 0)
    throw UserError(fmt::format("{}: argument '{}' has hidden size D = {}; "
                                "requires a positive multiple of {}",
                                fn, arg, hidden, multiple));
}

/// TileKernels 2.1's image_token_mask: bool (T,), contiguous; its flags,
/// or nullptr when it is not given.
inline const uint8_t *image_flags(std::string_view fn,
                                  const std::optional<HostTensor> &mask,
                                  int64_t tokens) {
  if (!mask)
    return nullptr;
  check_dtype(fn, "image_token_mask", *mask, DType::boolean);
  check_shape(fn, "image_token_mask", *mask, {tokens}, "[T]");
  check_contiguous(fn, "image_token_mask", *mask);
  return mask->data<uint8_t>();
}

} // namespace tilejit::engram::detail
