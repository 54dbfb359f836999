// transpose_ref.cpp - CPU reference of transpose and batched_transpose: an
// element-by-element byte copy, so every GPU result must match it exactly.
#include "transpose/reference.h"

#include "tilejit/error.h"

#include <cstring>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <string_view>

namespace tilejit::transpose {

using ref::HostTensor;

namespace {

/// The original's assertions (spec §14.1, §16.7) on the last two dims of a
/// rank-`rank` x; `fn` is the entry point named in messages.
void check_input(std::string_view fn, const HostTensor &x, int rank) {
  if (x.rank() != rank)
    throw UserError(fmt::format("{}: argument 'x' has shape [{}]; requires a "
                                "{}-D tensor",
                                fn, fmt::join(x.shape(), ", "), rank));
  // The brief's contract is "any dtype of 1, 2 or 4 bytes": the original
  // kernel moves 4 elements per vector access and swizzles shared memory by
  // `8 / elem_bytes`, both written for elements of at most 4 bytes. 8-byte
  // dtypes are rejected rather than guessed at.
  std::size_t bytes = size_of(x.dtype());
  if (bytes != 1 && bytes != 2 && bytes != 4)
    throw UserError(fmt::format("{}: argument 'x' has a dtype of {} bytes per "
                                "element; requires a dtype of 1, 2 or 4 bytes",
                                fn, bytes));
  int64_t rows = x.size(rank - 2), cols = x.size(rank - 1);
  if (rows % 64 != 0 || cols % 64 != 0)
    throw UserError(fmt::format("{}: argument 'x' has shape [{}]; requires "
                                "the last two dims to be multiples of 64",
                                fn, fmt::join(x.shape(), ", ")));
  if (x.stride(rank - 1) != 1)
    throw UserError(fmt::format("{}: argument 'x' has stride[{}] = {}; "
                                "requires a contiguous last dimension",
                                fn, rank - 1, x.stride(rank - 1)));
  if (x.stride(rank - 2) % 4 != 0)
    throw UserError(fmt::format("{}: argument 'x' has stride[{}] = {}; "
                                "requires a row stride that is a multiple of 4",
                                fn, rank - 2, x.stride(rank - 2)));
  // The kernel declares x with batch stride X * row_stride. With B <= 1 the
  // batch stride is never used, so it is not checked (torch gives any value
  // to the stride of a size-1 dim).
  if (rank == 3 && x.size(0) > 1 && x.stride(0) != rows * x.stride(1))
    throw UserError(fmt::format("{}: argument 'x' has stride[0] = {}; "
                                "requires stride[0] == size[1] * stride[1] = "
                                "{}",
                                fn, x.stride(0), rows * x.stride(1)));
}

/// out[b, y, x] = in[b, x, y] for a checked 3-D input.
HostTensor transpose_batches(const HostTensor &x) {
  const int64_t batches = x.size(0), rows = x.size(1), cols = x.size(2);
  HostTensor out = HostTensor::zeros(x.dtype(), {batches, cols, rows});
  const std::size_t bytes = size_of(x.dtype());
  const std::byte *src = x.raw();
  std::byte *dst = out.raw();
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        int64_t from = b * x.stride(0) + i * x.stride(1) + j;
        int64_t to = (b * cols + j) * rows + i;
        std::memcpy(dst + to * bytes, src + from * bytes, bytes);
      }
  return out;
}

} // namespace

HostTensor batched_transpose_ref(const HostTensor &x) {
  check_input("batched_transpose_ref", x, 3);
  return transpose_batches(x);
}

HostTensor transpose_ref(const HostTensor &x) {
  check_input("transpose_ref", x, 2);
  // As in the original: batched_transpose(x.unsqueeze(0)).squeeze(0).
  const int64_t rows = x.size(0), cols = x.size(1);
  const int64_t shape[3] = {1, rows, cols};
  const int64_t strides[3] = {rows * x.stride(0), x.stride(0), 1};
  HostTensor batched = HostTensor::view(x.raw(), x.dtype(), shape, strides);
  const int64_t out_shape[2] = {cols, rows};
  return transpose_batches(batched).reinterpret(x.dtype(), out_shape);
}

} // namespace tilejit::transpose
