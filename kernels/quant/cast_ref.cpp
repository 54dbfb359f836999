// cast_ref.cpp - The ground truth `tile_kernels.torch.cast` (§3.6): input
// dequantization, the block quantizer every cast shares, and cast_ref.
#include "quant/detail.h"

#include "common/convert.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace tilejit::quant {

using detail::ceil_div;
using detail::fail;
using detail::Matrix;

namespace detail {

Matrix to_matrix(const HostTensor &x) {
  Matrix m(x.size(0), x.size(1));
  for (int64_t i = 0; i < m.rows; ++i)
    for (int64_t j = 0; j < m.cols; ++j)
      m.at(i, j) = x.dtype() == DType::bf16
                       ? ref::bf16_to_f32(x.at<uint16_t>({i, j}))
                       : x.at<float>({i, j});
  return m;
}

HostTensor to_tensor(const Matrix &m) {
  const int64_t shape[] = {m.rows, m.cols};
  return HostTensor::from(DType::f32, shape, m.v);
}

/// float(data[i, j]) for e4m3 data or packed fp4 (i8, element 2j in the low
/// nibble of byte j).
static float decode_element(const HostTensor &data, int64_t i, int64_t j) {
  if (data.dtype() == DType::e4m3)
    return ref::e4m3_to_f32(data.at<uint8_t>({i, j}));
  const uint8_t byte = data.at<uint8_t>({i, j / 2});
  return ref::e2m1_to_f32(j % 2 == 0 ? byte & 0xF : byte >> 4);
}

Matrix dequantize(const QuantTensor &x, BlockSize b) {
  Matrix m(x.data.size(0), logical_cols(x.data));
  for (int64_t i = 0; i < m.rows; ++i)
    for (int64_t j = 0; j < m.cols; ++j)
      m.at(i, j) =
          decode_element(x.data, i, j) * read_sf(x.sf, i / b.bm, j / b.bk);
  return m;
}

static uint8_t encode(Fmt fmt, float y) {
  return fmt == Fmt::e4m3 ? ref::f32_to_e4m3(y) : ref::f32_to_e2m1(y);
}

QuantizeOptions quantize_options(Fmt f, BlockSize block, bool round_sf,
                                 bool col_major, bool packed) {
  QuantizeOptions o;
  o.fmt = f;
  o.block = block;
  o.round_sf = round_sf;
  o.layout = sf_layout_of(col_major, packed);
  return o;
}

QuantTensor quantize(const Matrix &x, const QuantizeOptions &o) {
  const int64_t M = x.rows, K = x.cols, bm = o.block.bm, bk = o.block.bk;
  const int64_t sf_rows = ceil_div(M, bm), num_groups = ceil_div(K, bk);
  QuantTensor out;
  out.sf = o.precomputed_sf ? *o.precomputed_sf
           : o.e4m3_sf      ? alloc_e4m3_sf(sf_rows, num_groups,
                                            o.layout == SfLayout::col_major)
                            : alloc_sf(sf_rows, num_groups, o.layout);
  std::vector<uint8_t> code(static_cast<size_t>(M * K)); // one per element
  for (int64_t bi = 0; bi < sf_rows; ++bi) {
    for (int64_t bj = 0; bj < num_groups; ++bj) {
      const int64_t i_end = std::min(M, (bi + 1) * bm);
      const int64_t j_end = std::min(K, (bj + 1) * bk);
      float sf_inv;
      if (o.precomputed_sf) {
        sf_inv = 1.0f / read_sf(*o.precomputed_sf, bi, bj);
      } else {
        // amax over the block's real elements only (partial blocks).
        float amax = 0.0f;
        for (int64_t i = bi * bm; i < i_end; ++i)
          for (int64_t j = bj * bk; j < j_end; ++j)
            amax = std::max(amax, std::fabs(x.at(i, j)));
        const SfAndInv s =
            o.e4m3_sf ? get_e4m3_sf_and_inv(amax, o.fmt, o.clamp_min)
                      : get_sf_and_inv(amax, o.fmt, o.round_sf, o.clamp_min);
        store_sf(out.sf, bi, bj, s);
        sf_inv = s.sf_inv;
      }
      for (int64_t i = bi * bm; i < i_end; ++i) {
        if (!o.stochastic) {
          for (int64_t j = bj * bk; j < j_end; ++j)
            code[i * K + j] = encode(o.fmt, x.at(i, j) * sf_inv);
          continue;
        }
        // Quads of whole groups (bk and K are multiples of 4).
        for (int64_t j = bj * bk; j < j_end; j += 4) {
          float v[4];
          for (int e = 0; e < 4; ++e)
            v[e] = x.at(i, j + e) * sf_inv;
          const StochasticWords w =
              stochastic_words(v, static_cast<uint32_t>(j / 4));
          for (int e = 0; e < 4; ++e) {
            const uint16_t r = stochastic_bits(w, e);
            code[i * K + j + e] = o.fmt == Fmt::e4m3 ? stochastic_e4m3(v[e], r)
                                                     : stochastic_e2m1(v[e], r);
          }
        }
      }
    }
  }
  if (o.fmt == Fmt::e4m3) {
    const int64_t shape[] = {M, K};
    out.data = HostTensor::from(DType::e4m3, shape, code);
  } else {
    out.data = HostTensor::zeros(DType::i8, {M, K / 2});
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < K / 2; ++j)
        out.data.at<uint8_t>({i, j}) =
            ref::pack_e2m1x2(code[i * K + 2 * j], code[i * K + 2 * j + 1]);
  }
  return out;
}

} // namespace detail

HostTensor dequantize_ref(const QuantTensor &x, BlockSize x_block_size) {
  constexpr std::string_view fn = "dequantize_ref";
  detail::check_rank(fn, "x.data", x.data, 2);
  detail::check_dtype(fn, "x.data", x.data, {DType::e4m3, DType::i8});
  detail::check_block_size(fn, "x_block_size", x_block_size);
  const int64_t M = x.data.size(0), K = logical_cols(x.data);
  check_sf_input(fn, "x.sf", x.sf, ceil_div(M, x_block_size.bm),
                 ceil_div(K, x_block_size.bk));
  return detail::to_tensor(detail::dequantize(x, x_block_size));
}

Matrix detail::cast_input_matrix(std::string_view fn, const CastInput &x,
                                 std::optional<BlockSize> x_block_size) {
  if (const HostTensor *plain = std::get_if<HostTensor>(&x)) {
    detail::check_rank(fn, "x", *plain, 2);
    detail::check_dtype(fn, "x", *plain, {DType::bf16, DType::f32});
    detail::check_last_dim_contiguous(fn, "x", *plain);
    if (x_block_size)
      fail(fn, fmt::format("argument 'x_block_size' is ({}, {}) for a plain "
                           "tensor x; requires None (it describes a "
                           "QuantTensor input)",
                           x_block_size->bm, x_block_size->bk));
    return detail::to_matrix(*plain);
  }
  const QuantTensor &q = std::get<QuantTensor>(x);
  detail::check_rank(fn, "x.data", q.data, 2);
  detail::check_dtype(fn, "x.data", q.data, {DType::e4m3, DType::i8});
  detail::check_last_dim_contiguous(fn, "x.data", q.data);
  if (!x_block_size)
    fail(fn, "argument 'x_block_size' is None for a QuantTensor x; requires "
             "the input's (bm, bk)");
  detail::check_block_size(fn, "x_block_size", *x_block_size);
  const int64_t M = q.data.size(0), K = logical_cols(q.data);
  check_sf_input(fn, "x.sf", q.sf, ceil_div(M, x_block_size->bm),
                 ceil_div(K, x_block_size->bk));
  return detail::dequantize(q, *x_block_size);
}

QuantTensor cast_ref(const CastInput &x, std::string_view fmt,
                     BlockSize block_size, const std::optional<HostTensor> &sf,
                     std::optional<BlockSize> x_block_size, bool round_sf,
                     bool use_tma_aligned_col_major_sf, bool use_packed_ue8m0) {
  constexpr std::string_view fn = "cast_ref";
  const Fmt f = detail::parse_fmt(fn, fmt, {Fmt::e4m3, Fmt::e2m1});
  detail::check_block_size(fn, "block_size", block_size);
  detail::check_layout_flags(fn, use_tma_aligned_col_major_sf, round_sf,
                             use_packed_ue8m0);
  const Matrix m = detail::cast_input_matrix(fn, x, x_block_size);
  if (f == Fmt::e2m1 && m.cols % 2 != 0)
    fail(fn, fmt::format("x has K = {} columns; 'e2m1' requires an even K",
                         m.cols));
  detail::QuantizeOptions o;
  o.fmt = f;
  o.block = block_size;
  o.round_sf = round_sf;
  o.layout = sf_layout_of(use_tma_aligned_col_major_sf, use_packed_ue8m0);
  if (sf) {
    if (use_tma_aligned_col_major_sf || use_packed_ue8m0)
      fail(fn, "a precomputed 'sf' requires use_tma_aligned_col_major_sf and "
               "use_packed_ue8m0 to be false");
    const int64_t rows = ceil_div(m.rows, block_size.bm);
    const int64_t groups = ceil_div(m.cols, block_size.bk);
    detail::check_dtype(fn, "sf", *sf, {DType::f32});
    detail::check_rank(fn, "sf", *sf, 2);
    detail::check_last_dim_contiguous(fn, "sf", *sf);
    detail::check_shape(fn, "sf", *sf, {rows, groups});
    o.precomputed_sf = &*sf;
  }
  return detail::quantize(m, o);
}

} // namespace tilejit::quant
