// batched_transpose_weight_sf_ref.cpp - TileKernels 2.1's
// batched_transpose_weight_sf (tk21_ops §3.7): power-of-two f32 weight block
// scales to the two packed-UE8M0 layouts of a grouped gemm.
#include "quant/detail.h"

#include "common/convert.h"

#include <fmt/format.h>

namespace tilejit::quant {

using detail::ceil_div;
using detail::fail;

std::vector<std::pair<HostTensor, HostTensor>>
batched_transpose_weight_sf_ref(const std::vector<HostTensor> &sfs, int64_t bs,
                                const std::vector<bool> &transpose_sf1s) {
  constexpr std::string_view fn = "batched_transpose_weight_sf_ref";
  if (transpose_sf1s.size() != sfs.size())
    fail(fn, fmt::format("argument 'transpose_sf1s' has {} entries; requires "
                         "one per sf ({})",
                         transpose_sf1s.size(), sfs.size()));
  if (bs != 32 && bs != 128)
    fail(fn,
         fmt::format("argument 'block_size' is {}; requires 32 or 128", bs));
  std::vector<std::pair<HostTensor, HostTensor>> outs;
  for (size_t w = 0; w < sfs.size(); ++w) {
    const HostTensor &sf = sfs[w];
    const std::string arg = fmt::format("sf[{}]", w);
    if (sf.rank() != 2 && sf.rank() != 3)
      fail(fn, fmt::format("argument '{}' has rank {}; requires 2 or 3", arg,
                           sf.rank()));
    detail::check_dtype(fn, arg, sf, {DType::f32});
    detail::check_contiguous(fn, arg, sf);
    const bool grouped = sf.rank() == 3;
    const int64_t G = grouped ? sf.size(0) : 1;
    const int64_t Nn = sf.size(sf.rank() - 2), Nk = sf.size(sf.rank() - 1);
    const int64_t n = Nn * bs, k = Nk * bs;
    if (n % 128 != 0 || k % 128 != 0 || (grouped && G == 0))
      fail(fn, fmt::format("argument '{}' has shape [{}]; requires Nn x {} "
                           "and Nk x {} multiples of 128 (and G > 0)",
                           arg, fmt::join(sf.shape(), ", "), bs, bs));
    const float *v = sf.data<float>();
    auto exponent = [&](int64_t g, int64_t i, int64_t j) -> uint32_t {
      if (i >= Nn || j >= Nk)
        return 0;
      const uint32_t bits = ref::f32_to_bits(v[(g * Nn + i) * Nk + j]);
      if ((bits & 0x807FFFFFu) != 0)
        fail(fn, fmt::format("{}[{}, {}, {}] is {}; requires a positive power "
                             "of two or 0",
                             arg, g, i, j, ref::bits_to_f32(bits)));
      return bits >> 23;
    };
    const int64_t P0 = ceil_div(Nk, 4), P1 = ceil_div(Nn, 4);
    // (G, n, P0) strides (P0 n, 1, n) and (G, k, P1) strides (P1 k, 1, k);
    // without G the leading dimension is dropped.
    auto alloc = [&](int64_t rows, int64_t words, bool transposed) {
      std::vector<int64_t> shape = {G, rows, words},
                           strides = {words * rows, 1, rows};
      if (transposed) {
        shape = {G, words, rows};
        strides = {words * rows, rows, 1};
      }
      if (!grouped) {
        shape.erase(shape.begin());
        strides.erase(strides.begin());
      }
      return HostTensor::zeros_strided(DType::i32, shape, strides);
    };
    HostTensor sf0 = alloc(n, P0, false);
    HostTensor sf1 = alloc(k, P1, transpose_sf1s[w]);
    auto put = [&](HostTensor &t, int64_t g, int64_t a, int64_t b,
                   uint32_t word) {
      std::vector<int64_t> index = {g, a, b};
      if (!grouped)
        index.erase(index.begin());
      t.data<int32_t>()[t.offset(index)] = static_cast<int32_t>(word);
    };
    for (int64_t g = 0; g < G; ++g) {
      for (int64_t r = 0; r < n; ++r)
        for (int64_t p = 0; p < P0; ++p) {
          uint32_t word = 0;
          for (int64_t j = 0; j < 4; ++j)
            word |= exponent(g, r / bs, 4 * p + j) << (8 * j);
          put(sf0, g, r, p, word);
        }
      for (int64_t c = 0; c < k; ++c)
        for (int64_t q = 0; q < P1; ++q) {
          uint32_t word = 0;
          for (int64_t j = 0; j < 4; ++j)
            word |= exponent(g, 4 * q + j, c / bs) << (8 * j);
          if (transpose_sf1s[w])
            put(sf1, g, q, c, word);
          else
            put(sf1, g, c, q, word);
        }
    }
    outs.emplace_back(std::move(sf0), std::move(sf1));
  }
  return outs;
}

} // namespace tilejit::quant
