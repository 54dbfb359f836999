// detail.h - Internal helpers of the quant references: a dense float32
// matrix, argument checks with uniform messages, and the block quantizer.
#pragma once

#include "common/cuda_math.h"
#include "quant/reference.h"

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilejit::quant::detail {

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline int64_t align(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

/// A dense row-major float32 matrix, the working form of every op.
struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<float> v;

  Matrix(int64_t r, int64_t c)
      : rows(r), cols(c), v(static_cast<size_t>(r * c), 0.0f) {}
  float &at(int64_t i, int64_t j) { return v[i * cols + j]; }
  float at(int64_t i, int64_t j) const { return v[i * cols + j]; }
};

/// Throws UserError("<function>: <message>").
[[noreturn]] void fail(std::string_view function, const std::string &message);

/// "a", "a or b", "a, b or c".
std::string join_or(std::initializer_list<std::string_view> items);

void check_rank(std::string_view fn, std::string_view arg, const HostTensor &t,
                int rank);
void check_dtype(std::string_view fn, std::string_view arg, const HostTensor &t,
                 std::initializer_list<DType> allowed);
void check_contiguous(std::string_view fn, std::string_view arg,
                      const HostTensor &t);
/// stride(-1) == 1 (rows may be strided).
void check_last_dim_contiguous(std::string_view fn, std::string_view arg,
                               const HostTensor &t);
void check_shape(std::string_view fn, std::string_view arg, const HostTensor &t,
                 std::initializer_list<int64_t> shape);
/// Parses `fmt` against the allowed formats.
/// The per-channel ops' shape rule: M % 128 == 0 and K % 64 == 0.
void check_per_channel_shape(std::string_view fn, const HostTensor &x);
Fmt parse_fmt(std::string_view fn, std::string_view fmt,
              std::initializer_list<Fmt> allowed);
/// use_packed_ue8m0 requires use_tma_aligned_col_major_sf and round_sf.
void check_layout_flags(std::string_view fn, bool col_major, bool round_sf,
                        bool packed);
void check_block_size(std::string_view fn, std::string_view arg,
                      BlockSize block);

/// The 2.1 SwiGLU ops' x and weights: x a contiguous bf16 or f32 (T, 2H)
/// with H % 64 == 0 (returns H); topk_weights a contiguous f32 (T,), and
/// routed_scaling_factor only with weights.
int64_t check_swiglu21_args(std::string_view fn, const HostTensor &x,
                            const std::optional<HostTensor> &topk_weights,
                            std::optional<float> routed_scaling_factor);
/// The checked ends of a psum_num_tokens_per_expert (int32 (E,),
/// non-decreasing) and the checked `alignment` (> 0).
std::vector<int64_t> psum_ends(std::string_view fn, const HostTensor &psum,
                               int64_t alignment);

/// A 2-D bf16 or f32 tensor (any strides) as float32.
Matrix to_matrix(const HostTensor &x);
/// A contiguous f32 tensor holding the matrix.
HostTensor to_tensor(const Matrix &m);
/// data * sf, §3.6 step 1 (no argument checks).
Matrix dequantize(const QuantTensor &x, BlockSize x_block_size);

/// The working matrix of a cast input: a plain 2-D bf16/f32 tensor (rows may
/// be strided; x_block_size must be None), or a QuantTensor dequantized with
/// x_block_size (data e4m3 or packed fp4; sf per check_sf_input).
Matrix cast_input_matrix(std::string_view fn, const CastInput &x,
                         std::optional<BlockSize> x_block_size);

/// The block quantizer shared by every cast: per (bm, bk) block, amax over
/// the real elements, §3.2, q = cvt(x * sf_inv). With `precomputed_sf`,
/// sf_inv = 1 / sf and the SF output is that tensor.
struct QuantizeOptions {
  Fmt fmt = Fmt::e4m3;
  BlockSize block{1, 1};
  bool round_sf = false;
  SfLayout layout = SfLayout::row_major;
  std::optional<float> clamp_min;
  const HostTensor *precomputed_sf = nullptr;
  /// 2.1's E4M3 scales (get_e4m3_sf_and_inv), stored as e4m3 bytes
  /// (row-major, or column-major with a col_major layout).
  bool e4m3_sf = false;
  /// 2.1's stochastic_cast: the codes of each quad of columns 4q .. 4q + 3
  /// of a row (its scaled values x * sf_inv) round with the random bits of
  /// stochastic_words(values, q) (the row is not mixed in).
  bool stochastic = false;
};
QuantTensor quantize(const Matrix &x, const QuantizeOptions &options);
/// Options for `block` scaling in `f`, the SF layout from the op's flags.
QuantizeOptions quantize_options(Fmt f, BlockSize block, bool round_sf,
                                 bool col_major = false, bool packed = false);

/// A per-channel cast's plain x: a contiguous bf16/f32 2-D tensor, with
/// num_per_channels None (it describes a quantized input), as a Matrix.
Matrix plain_per_channel_input(std::string_view fn, const HostTensor &x,
                               std::optional<int64_t> num_per_channels);

/// A contiguous (K, M) copy of an e4m3 (M, K) tensor.
HostTensor transpose_e4m3(const HostTensor &q);

/// SwiGLU activation in the exact float32 order of §11: t = 1 + expf(-g)
/// (CUDA's: ref::cuda_expf),
/// then (g / t) * u (IEEE division, then multiply).
inline float swiglu(float g, float u) {
  const float t = 1.0f + ref::cuda_expf(-g);
  return (g / t) * u;
}

} // namespace tilejit::quant::detail
