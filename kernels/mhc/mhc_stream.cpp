// mhc_stream.cpp - What the stream ops share (mhc_stream.h): the spec of a
// call and the (N, a, b) views of its tensors.
#include "mhc/mhc_stream.h"

#include "op/op.h"

#include <algorithm>
#include <bit>

namespace tilejit::mhc {

MhcStreamSpec stream_spec(const ops::Call &c, int64_t mhc,
                          std::initializer_list<std::string_view> tensors) {
  MhcStreamSpec s;
  s.mhc = static_cast<int32_t>(mhc);
  // 8 bf16 (16 bytes) a thread of 128 at 1024 columns; narrower rows take
  // the power of two that covers them (at least one column a thread).
  const auto h = static_cast<uint64_t>(std::max<int64_t>(1, c.dim("H")));
  s.chunk = static_cast<int32_t>(
      std::clamp<uint64_t>(std::bit_ceil(h), s.threads, 1024));
  s.vector_bytes = ops::vector_bytes(c, tensors);
  return s;
}

std::vector<ops::DimRule> stream_rules() {
  return {{.dim = "mhc", .min = 1, .max = 16}, {.dim = "H", .min = 1}};
}

int64_t tokens_of(const rt::TensorView &t, int trailing) {
  int64_t n = 1;
  for (int d = 0; d < t.rank - trailing; ++d)
    n *= t.shape[d];
  return n;
}

rt::TensorView token_rows(const rt::TensorView &t, int trailing, int64_t a,
                          int64_t b) {
  const int64_t shape[3] = {tokens_of(t, trailing), a, b};
  return rt::TensorView::contiguous(t.data, t.dtype, shape);
}

rt::TensorView token_matrix(const rt::TensorView &t, int64_t n, int64_t b,
                            int64_t stride) {
  const int64_t shape[2] = {n, b}, strides[2] = {stride, 1};
  return rt::TensorView::strided(t.data, t.dtype, shape, strides);
}

} // namespace tilejit::mhc
