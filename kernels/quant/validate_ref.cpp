// validate_ref.cpp - Argument checks shared by the quant references; every
// message names the function, the argument, the value and the requirement.
#include "quant/detail.h"

#include "tilejit/error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tilejit::quant::detail {

void fail(std::string_view function, const std::string &message) {
  throw UserError(fmt::format("{}: {}", function, message));
}

std::string join_or(std::initializer_list<std::string_view> items) {
  std::string out;
  size_t i = 0;
  for (std::string_view item : items) {
    if (i > 0)
      out += i + 1 == items.size() ? " or " : ", ";
    out += item;
    ++i;
  }
  return out;
}

void check_rank(std::string_view fn, std::string_view arg, const HostTensor &t,
                int rank) {
  if (t.rank() != rank)
    fail(fn, fmt::format("argument '{}' has shape [{}]; requires a {}-D tensor",
                         arg, fmt::join(t.shape(), ", "), rank));
}

void check_dtype(std::string_view fn, std::string_view arg, const HostTensor &t,
                 std::initializer_list<DType> allowed) {
  std::vector<std::string_view> names;
  for (DType d : allowed) {
    if (d == t.dtype())
      return;
    names.push_back(name_of(d));
  }
  std::string list;
  for (size_t i = 0; i < names.size(); ++i)
    list += (i == 0                  ? ""
             : i + 1 == names.size() ? " or "
                                     : ", ") +
            std::string(names[i]);
  fail(fn, fmt::format("argument '{}' has dtype {}; requires {}", arg,
                       name_of(t.dtype()), list));
}

void check_contiguous(std::string_view fn, std::string_view arg,
                      const HostTensor &t) {
  if (!t.is_contiguous())
    fail(fn, fmt::format("argument '{}' is {}; requires a contiguous tensor",
                         arg, t.to_string()));
}

void check_last_dim_contiguous(std::string_view fn, std::string_view arg,
                               const HostTensor &t) {
  if (t.rank() > 0 && t.size(t.rank() - 1) > 1 && t.stride(t.rank() - 1) != 1)
    fail(fn, fmt::format("argument '{}' is {}; requires a contiguous last "
                         "dimension (stride 1)",
                         arg, t.to_string()));
}

void check_shape(std::string_view fn, std::string_view arg, const HostTensor &t,
                 std::initializer_list<int64_t> shape) {
  if (!std::equal(t.shape().begin(), t.shape().end(), shape.begin(),
                  shape.end()))
    fail(fn, fmt::format("argument '{}' has shape [{}]; requires [{}]", arg,
                         fmt::join(t.shape(), ", "), fmt::join(shape, ", ")));
}

void check_per_channel_shape(std::string_view fn, const HostTensor &x) {
  if (x.size(0) % 128 != 0)
    fail(fn, fmt::format("argument 'x' has M = {} rows; requires "
                         "M % 128 == 0",
                         x.size(0)));
  if (x.size(1) % 64 != 0)
    fail(fn, fmt::format("argument 'x' has K = {} columns; requires "
                         "K % 64 == 0",
                         x.size(1)));
}

Fmt parse_fmt(std::string_view fn, std::string_view fmt,
              std::initializer_list<Fmt> allowed) {
  std::string list;
  size_t i = 0;
  for (Fmt f : allowed) {
    if (fmt == fmt_name(f))
      return f;
    list += (i == 0                    ? ""
             : i + 1 == allowed.size() ? " or "
                                       : ", ") +
            fmt::format("'{}'", fmt_name(f));
    ++i;
  }
  fail(fn, fmt::format("argument 'fmt' is '{}'; requires {}", fmt, list));
}

void check_layout_flags(std::string_view fn, bool col_major, bool round_sf,
                        bool packed) {
  // Packed UE8M0 without col-major or round_sf is not asserted by the
  // original but produces garbage there (a float stored into a byte); we
  // reject it.
  if (packed && (!col_major || !round_sf))
    fail(fn, fmt::format("argument 'use_packed_ue8m0' is true with "
                         "use_tma_aligned_col_major_sf={} and round_sf={}; "
                         "requires both to be true",
                         col_major, round_sf));
}

void check_block_size(std::string_view fn, std::string_view arg,
                      BlockSize block) {
  if (block.bm <= 0 || block.bk <= 0)
    fail(fn, fmt::format("argument '{}' is ({}, {}); requires positive sizes",
                         arg, block.bm, block.bk));
}

int64_t check_swiglu21_args(std::string_view fn, const HostTensor &x,
                            const std::optional<HostTensor> &topk_weights,
                            std::optional<float> routed_scaling_factor) {
  check_rank(fn, "x", x, 2);
  check_dtype(fn, "x", x, {DType::bf16, DType::f32});
  check_contiguous(fn, "x", x);
  if (x.size(1) % 128 != 0)
    fail(fn, fmt::format("argument 'x' has 2H = {} columns; requires "
                         "H % 64 == 0",
                         x.size(1)));
  if (topk_weights) {
    check_dtype(fn, "topk_weights", *topk_weights, {DType::f32});
    check_contiguous(fn, "topk_weights", *topk_weights);
    check_shape(fn, "topk_weights", *topk_weights, {x.size(0)});
  } else if (routed_scaling_factor) {
    fail(fn, "argument 'routed_scaling_factor' is given while "
             "'topk_weights' is None; requires weights");
  }
  return x.size(1) / 2;
}

std::vector<int64_t> psum_ends(std::string_view fn, const HostTensor &psum,
                               int64_t alignment) {
  if (alignment <= 0)
    fail(fn,
         fmt::format("argument 'alignment' is {}; requires > 0", alignment));
  check_rank(fn, "psum_num_tokens_per_expert", psum, 1);
  check_dtype(fn, "psum_num_tokens_per_expert", psum, {DType::i32});
  std::vector<int64_t> ends;
  for (int64_t e = 0; e < psum.size(0); ++e) {
    const int64_t end = psum.at<int32_t>({e});
    const int64_t previous = ends.empty() ? 0 : ends.back();
    if (end < previous)
      fail(fn, fmt::format("psum_num_tokens_per_expert[{}] is {}, below "
                           "the previous {}; requires a non-decreasing "
                           "prefix sum",
                           e, end, previous));
    ends.push_back(end);
  }
  return ends;
}

} // namespace tilejit::quant::detail
