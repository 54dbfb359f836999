// reference.h - CPU references of the quantization family (per-token,
// per-block, per-channel casts, cast-back, E5M6, SwiGLU-fused casts;
// shared/specs/quant_transpose.md §3-§11, §13).
#pragma once

#include "common/host_tensor.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace tilejit::quant {

using ref::HostTensor;

// ---------------------------------------------------------------------------
// §3 Shared scale-factor machinery
// ---------------------------------------------------------------------------

/// Quantized element format (§3.1). The ops take it as the strings 'e4m3',
/// 'e2m1' and 'e5m6'.
enum class Fmt { e4m3, e2m1, e5m6 };

/// "e4m3", "e2m1", "e5m6".
std::string_view fmt_name(Fmt fmt);
/// 448, 6 or 65024.
float fmt_max(Fmt fmt);
/// The amax clamp-min: 1e-4f for e4m3 and e5m6, 6 * 2^-126 for e2m1 (so that
/// sf >= 2^-126).
float default_clamp_min(Fmt fmt);

/// `sf` is the dequantization scale (x ~ q * sf), `sf_inv` the quantization
/// multiplier (q = cvt(x * sf_inv)); `ue8m0` is the packed byte e + 127 of a
/// rounded sf (0 when not rounded, where it has no meaning).
struct SfAndInv {
  float sf;
  float sf_inv;
  uint8_t ue8m0;
};

/// §3.2 `get_sf_and_inv`: a = max(amax, clamp_min); sf = a / fmt_max and,
/// without rounding, sf_inv = fmt_max / a (a second IEEE division, not 1/sf).
/// With `round_sf`, sf is rounded up to a power of two 2^e and sf_inv = 2^-e.
///
///   get_sf_and_inv(3.0f, Fmt::e4m3, true) == {0x1p-7f, 128.0f, 120}
SfAndInv get_sf_and_inv(float amax, Fmt fmt, bool round_sf,
                        std::optional<float> clamp_min = std::nullopt);

/// TileKernels 2.1's E4M3 scale factors (tk21_ops §0.4(a), use_e4m3_sf):
/// a = max(amax, clamp_min, by default fmt_max x 2^-9: 0.875 for e4m3,
/// 0.01171875 for e2m1); sf = e4m3(a / fmt_max) (RNE, saturating to 448)
/// as its decoded f32, sf_inv = 1 / sf (IEEE). ue8m0 is 0.
///
///   get_e4m3_sf_and_inv(3.0f, Fmt::e4m3) == {3 x 2^-9, 1 / (3 x 2^-9), 0}
SfAndInv get_e4m3_sf_and_inv(float amax, Fmt fmt,
                             std::optional<float> clamp_min = std::nullopt);

/// An e4m3 SF of `sf_rows` x `num_groups`, zero-filled: row-major, or with
/// `col_major` strides (1, align(sf_rows, 16)) (16-byte columns).
HostTensor alloc_e4m3_sf(int64_t sf_rows, int64_t num_groups, bool col_major);

/// The three SF layouts of §3.3.
enum class SfLayout {
  row_major,    // float32 (M', nK), strides (nK, 1)
  col_major,    // float32 (M', nK), strides (1, align(M', 4))
  packed_ue8m0, // int32 (M', ceil(nK/4)), strides (1, align(M', 4))
};

/// The layout the flags select. Does not validate the combination.
SfLayout sf_layout_of(bool use_tma_aligned_col_major_sf, bool use_packed_ue8m0);

/// A zero-filled SF tensor of the layout with the exact dtype, shape and
/// strides the ops return (§3.3). `sf_rows` is M', `num_groups` is nK.
///
///   alloc_sf(5, 6, SfLayout::packed_ue8m0) -> i32[5, 2] strides [1, 8]
HostTensor alloc_sf(int64_t sf_rows, int64_t num_groups, SfLayout layout);

/// Stores the SF of row block `m`, group `k`: the float `sf` into a float32
/// tensor, or the byte `ue8m0` into byte k % 4 (bits 8j..8j+7) of int32
/// element (m, k / 4) of a packed tensor.
void store_sf(const HostTensor &sf, int64_t m, int64_t k, const SfAndInv &s);

/// Reads SF (m, k) of a float32 tensor (any strides) or of a packed int32
/// tensor (byte b decodes to the float with bits b << 23, so 0 -> +0.0).
float read_sf(const HostTensor &sf, int64_t m, int64_t k);

/// Validates an SF *input* (§3.3 "Reading SF inputs"): a tensor with
/// stride(0) == 1 is column-major and must be float32 (M', nK) or packed
/// int32 (M', ceil(nK/4)); any other must have stride(1) == 1 and be
/// float32 (M', nK). Throws UserError naming `function` and `argument`.
void check_sf_input(std::string_view function, std::string_view argument,
                    const HostTensor &sf, int64_t sf_rows, int64_t num_groups);

/// A quantized tensor: the Python tuple (data, sf).
struct QuantTensor {
  HostTensor data;
  HostTensor sf;
};

/// A scaling block (bm, bk): bm rows (tokens) by bk columns (channels).
struct BlockSize {
  int64_t bm;
  int64_t bk;
};

/// An op input that is either a plain bf16/f32 tensor or a QuantTensor.
using CastInput = std::variant<HostTensor, QuantTensor>;

/// Logical K of quantized data: cols for e4m3, 2 * cols for packed fp4
/// (i8), cols * 2 / 3 for E5M6 bytes (u8).
int64_t logical_cols(const HostTensor &data);

/// §3.6 step 1: data * sf[m / bm, k / bk] in float32, as a contiguous f32
/// (M, K). `data` is e4m3 (M, K) or packed fp4 i8 (M, K / 2); `sf` follows
/// check_sf_input. This is also torch `cast_back(x, 'fp32', block)`.
HostTensor dequantize_ref(const QuantTensor &x, BlockSize x_block_size);

/// The ground truth `tile_kernels.torch.cast` (§3.6). `fmt` is 'e4m3' or
/// 'e2m1'. With a precomputed `sf` (row-major float32 (M', nK)) the result's
/// `sf` is that tensor and the data uses sf_inv = 1 / sf.
QuantTensor cast_ref(const CastInput &x, std::string_view fmt,
                     BlockSize block_size,
                     const std::optional<HostTensor> &sf = std::nullopt,
                     std::optional<BlockSize> x_block_size = std::nullopt,
                     bool round_sf = false,
                     bool use_tma_aligned_col_major_sf = false,
                     bool use_packed_ue8m0 = false);

/// §13: decodes packed fp4 (i8 or u8, ndim >= 1) into [..., 2 * last] of
/// `out_dtype` (f32, f16, bf16 or f64); element 2j from the low nibble.
HostTensor unpack_from_e2m1fn_x2_ref(const HostTensor &x,
                                     DType out_dtype = DType::f32);

// ---------------------------------------------------------------------------
// §4, §5 per_token_cast family
// ---------------------------------------------------------------------------

/// Row-wise (1, num_per_channels) quantization of a bf16/f32 (M, K) (rows
/// may be strided) or a QuantTensor (re-quantization, §4.3). `fmt` 'e4m3'
/// gives e4m3 (M, K), 'e2m1' packed fp4 i8 (M, K/2), 'e5m6' the §5 path.
/// With `stochastic_cast` (2.1, tk21 §3.2; K and the group multiples of 4)
/// the codes of columns 4q .. 4q + 3 of a row round with the random bits of
/// their scaled values and quad index q (stochastic_e4m3 / stochastic_e2m1);
/// the scales are the deterministic ones.
///
///   auto [out, sf] = per_token_cast_ref(x, "e4m3", 128);
QuantTensor per_token_cast_ref(const CastInput &x, std::string_view fmt,
                               int64_t num_per_channels,
                               std::optional<BlockSize> x_block_size = {},
                               bool use_tma_aligned_col_major_sf = false,
                               bool round_sf = false,
                               bool use_packed_ue8m0 = false,
                               bool use_e4m3_sf = false,
                               bool stochastic_cast = false);

/// Only the SF of per_token_cast_ref.
HostTensor per_token_cast_with_sf_only_ref(
    const CastInput &x, std::string_view fmt, int64_t num_per_channels,
    std::optional<BlockSize> x_block_size = {},
    bool use_tma_aligned_col_major_sf = false, bool round_sf = false,
    bool use_packed_ue8m0 = false);

/// per_token_cast_ref's data with sf_inv = 1 / sf[m, g] (§4.4); `sf` is a
/// row-major float32 (M, nK), or TileKernels 2.1's e4m3 scales (decoded).
HostTensor per_token_cast_with_precomputed_sf_ref(
    const CastInput &x, std::string_view fmt, int64_t num_per_channels,
    const HostTensor &sf, std::optional<BlockSize> x_block_size = {},
    bool use_tma_aligned_col_major_sf = false, bool round_sf = false,
    bool use_packed_ue8m0 = false);

/// §5 (reached through per_token_cast_ref(x, "e5m6", K)): one scale per row,
/// codes packed 8 per 3 little-endian words, returned as u8 (M, K * 3 / 2).
QuantTensor
per_token_cast_to_e5m6_ref(const HostTensor &x, int64_t num_per_channels,
                           bool use_tma_aligned_col_major_sf = false,
                           bool round_sf = false,
                           bool use_packed_ue8m0 = false);

// ---------------------------------------------------------------------------
// §6, §7 cast_back
// ---------------------------------------------------------------------------

/// out[m, j] = fmt(float(data[m, j]) * sf[m / bm, j / bk]) with `fmt` 'bf16'
/// (RNE) or 'fp32'. `x_special_fmt` 'e5m6' reads u8 (M, 3K/2) E5M6 data.
/// Identical, for K % 64 == 0, to the torch reference `cast_back`.
HostTensor cast_back_ref(const QuantTensor &x, std::string_view fmt,
                         BlockSize x_block_size,
                         std::optional<std::string_view> x_special_fmt = {});

/// cast_back_ref(x, fmt, (1, num_per_channels), x_special_fmt).
HostTensor
per_token_cast_back_ref(const QuantTensor &x, std::string_view fmt,
                        int64_t num_per_channels,
                        std::optional<std::string_view> x_special_fmt = {});

/// TileKernels 2.1's batched_transpose_weight_sf (tk21_ops §3.7): each
/// weight's f32 block scales sf (Nn, Nk) or (G, Nn, Nk), contiguous, every
/// value a positive power of two or 0, n = Nn x bs and k = Nk x bs
/// multiples of 128, bs (block_size) 32 or 128, as the two packed-UE8M0
/// int32 layouts of a grouped gemm: sf0 (G, n, ceil(Nk / 4)) strides
/// (P0 n, 1, n), byte j of [g, r, p] the exponent of sf[g, r / bs, 4p + j];
/// sf1 (G, k, ceil(Nn / 4)) strides (P1 k, 1, k), byte j of [g, c, q] that of
/// sf[g, 4q + j, c / bs], or with transpose_sf1 the same storage viewed as
/// (G, P1, k). Bytes past Nk (Nn) are 0; the G dimension only for a 3-D sf.
/// (The op's `outs`, buffers to write into, are the caller's business.)
std::vector<std::pair<HostTensor, HostTensor>>
batched_transpose_weight_sf_ref(const std::vector<HostTensor> &sf,
                                int64_t block_size,
                                const std::vector<bool> &transpose_sf1s);

/// TileKernels 2.1's per_token_cast_and_cast_back (tk21_ops §3.3), "fake
/// quantization": the values x takes when the op writes over it, in x's
/// dtype, equal to cast_back_ref(per_token_cast_ref(x, fmt,
/// num_per_channels, round_sf), x's dtype, (1, num_per_channels)). x is bf16
/// or f32 (M, K) with unit inner stride; fmt 'e4m3' or 'e2m1';
/// num_per_channels 16, 32, 64 or 128 dividing K; K % 64 == 0; E4M3 scales
/// with use_e4m3_sf (exclusive with round_sf).
HostTensor per_token_cast_and_cast_back_ref(const HostTensor &x,
                                            std::string_view fmt,
                                            int64_t num_per_channels,
                                            bool round_sf = false,
                                            bool use_e4m3_sf = false);

/// TileKernels 2.1's element-wise `quant.cast(x, dtype)` without stochastic
/// rounding (tk21_ops.md §3.1): a contiguous f32, bf16 or e4m3 tensor
/// converted to `dtype` (f32, bf16 or e4m3): widening exactly, narrowing to
/// nearest even, e4m3 saturating to +-448 (NaN stays NaN).
HostTensor dtype_cast_ref(const HostTensor &x, DType dtype);

/// TileKernels 2.1's stochastic-rounding random words of a quad (tk21_ops
/// §2.2, exact): a hash of the four f32 values' bits and the quad index.
struct StochasticWords {
  uint32_t r0, r1;
};
StochasticWords stochastic_words(const float v[4], uint32_t quad);

/// The 16 random bits element `element` (0..3) of a quad takes: the low
/// and high halves of r0, then of r1 (TileKernels' own emulation of bf16;
/// on Blackwell cvt.rs takes e4m3's bits from r0 alone, in an undocumented
/// order, so e4m3 here is not bit-identical to a Blackwell run).
uint16_t stochastic_bits(StochasticWords w, int element);

/// v rounded to bf16 with 16 random bits r: its upper 16 bits, plus one
/// (away from zero) when r < its lower 16 bits; no saturation (the
/// largest finite value may carry into infinity), NaN stays NaN.
uint16_t stochastic_bf16(float v, uint16_t r);

/// v rounded to e4m3 with 16 random bits r: the e4m3 magnitude at or below
/// |v|, plus one step away from zero when r < the discarded fraction of a
/// step (to 2^-16, truncated); |v| >= 448 saturates to 448, NaN is 0x7f.
uint8_t stochastic_e4m3(float v, uint16_t r);

/// The same for an fp4 e2m1 code (sign in bit 3): the magnitude of 0, 0.5,
/// 1, 1.5, 2, 3, 4, 6 at or below |v| and the next with probability of the
/// discarded fraction; |v| >= 6 saturates, NaN gives +-6 (as the torch
/// encoder).
uint8_t stochastic_e2m1(float v, uint16_t r);

/// TileKernels 2.1's cast(x, dtype, stochastic_rounding=True) as tilejit
/// computes it (tk21_ops §3.1): f32 to bf16, f32 to e4m3 or bf16 to e4m3 of
/// a contiguous x of 4n elements; quad q is elements 4q .. 4q + 3 with
/// index q.
HostTensor stochastic_cast_ref(const HostTensor &x, DType dtype);

// ---------------------------------------------------------------------------
// §8, §9 per_block_cast family
// ---------------------------------------------------------------------------

/// (bm, bk) block quantization of a contiguous bf16/f32 (M, K), K % 64 == 0,
/// bm, bk in {32, 128}; `fmt` 'e4m3' or 'e2m1'.
QuantTensor per_block_cast_ref(const HostTensor &x, std::string_view fmt,
                               BlockSize block_size,
                               bool use_tma_aligned_col_major_sf = false,
                               bool round_sf = false,
                               bool use_packed_ue8m0 = false);

HostTensor per_block_cast_with_sf_only_ref(
    const HostTensor &x, std::string_view fmt, BlockSize block_size,
    bool use_tma_aligned_col_major_sf = false, bool round_sf = false,
    bool use_packed_ue8m0 = false);

/// Data with sf_inv = 1 / sf; `sf` is row-major float32 (M', nK) and the
/// layout flags must be false.
HostTensor per_block_cast_with_precomputed_sf_ref(
    const HostTensor &x, std::string_view fmt, BlockSize block_size,
    const HostTensor &sf, bool use_tma_aligned_col_major_sf = false,
    bool round_sf = false, bool use_packed_ue8m0 = false);

/// §9: re-blocks power-of-two-scaled packed fp4 into e4m3 without loss
/// (exponent arithmetic; `round_sf` is ignored). Throws UserError where the
/// original's device assertion (scale ratio > 2^11 in one block) would trap.
QuantTensor per_block_cast_lossless_ref(
    const QuantTensor &x, std::string_view fmt, BlockSize x_block_size,
    BlockSize out_block_size, bool use_tma_aligned_col_major_sf = false,
    bool round_sf = false, bool use_packed_ue8m0 = false);

// ---------------------------------------------------------------------------
// §10 per-channel family
// ---------------------------------------------------------------------------

/// (128, 1) e4m3 quantization; M % 128 == 0, K % 64 == 0. SF float32
/// (M / 128, K) row-major.
QuantTensor per_channel_cast_ref(const HostTensor &x, std::string_view fmt,
                                 int64_t num_per_tokens, bool round_sf = false);

/// (128, 1) e4m3 quantization of the rows pos_to_token selects (-1: a zero
/// row), or of all rows. `x` may be a per-token (1, 128) QuantTensor.
QuantTensor per_channel_cast_fused_ref(
    const CastInput &x, std::string_view fmt, int64_t num_per_tokens,
    bool round_sf = false, std::optional<int64_t> num_per_channels = {},
    const std::optional<HostTensor> &pos_to_token = std::nullopt);

/// TileKernels 2.1's per_channel_cast (tk21_ops §3.5): (bm, 1) e4m3
/// quantization, bm = num_per_tokens 32 or 128, of a contiguous bf16/f32
/// (M, K) or of a per-token quantized one (e4m3 data with (1,
/// num_per_channels) scales, 32 or 128, in any layout check_sf_input takes;
/// its values x_q x sf_in in f32); M and K multiples of 128. Scales: f32
/// (M / bm, K) row-major, or with use_packed_ue8m0 (requires round_sf) 2.1's
/// column-pack int32 (ceil(M / bm / 4), K), byte j of (q, c) the UE8M0 of
/// token block 4q + j, 0 past the last. (1.0's form: per_channel_cast_ref.)
QuantTensor
per_channel_cast_21_ref(const CastInput &x, std::string_view fmt,
                        int64_t num_per_tokens, bool round_sf = false,
                        std::optional<int64_t> num_per_channels = {},
                        bool use_packed_ue8m0 = false);

/// (bm, 1) e4m3 quantization of a bf16 (M, K), returned transposed: data is
/// e4m3 (K, M) contiguous, sf float32 (M / bm, K) row-major.
QuantTensor per_channel_cast_and_transpose_ref(const HostTensor &x,
                                               std::string_view fmt,
                                               int64_t num_per_tokens,
                                               bool round_sf = false);

// ---------------------------------------------------------------------------
// §11 SwiGLU-fused ops
// ---------------------------------------------------------------------------

/// act = (g / (1 + expf(-g))) * u per row of a (E, 2H) x (gate | up), times
/// topk_weights.flat[pos_to_token_topk[r]] when given, then a per-token
/// (1, num_per_channels) e4m3 cast of the float32 activation. Rows with
/// pos_to_expert < 0 are zero. `clamped_count` (i64 (3,)) is added to in
/// place.
QuantTensor swiglu_forward_and_per_token_cast_ref(
    const HostTensor &x, std::string_view fmt, int64_t num_per_channels,
    const std::optional<HostTensor> &pos_to_token_topk = std::nullopt,
    const std::optional<HostTensor> &topk_weights = std::nullopt,
    const std::optional<HostTensor> &pos_to_expert = std::nullopt,
    bool use_tma_aligned_col_major_sf = false, bool round_sf = false,
    bool use_packed_ue8m0 = false,
    std::optional<float> swiglu_clamp_value = std::nullopt,
    const std::optional<HostTensor> &clamped_count = std::nullopt,
    std::optional<float> sf_clamp_min = std::nullopt);

/// TileKernels 2.1's MoE row layout (tk21_ops §3.8): expert e owns the
/// expanded rows [align(psum[e - 1], alignment), psum[e]) (psum[-1] = 0);
/// the rows before that aligned start are padding, and rows at or past
/// align(psum[E - 1], alignment) belong to no expert. Without psum every
/// row is valid. Returns, per row of `rows`, whether it is valid. `psum` is
/// int32 (E,), non-decreasing.
std::vector<bool> psum_valid_rows(const std::optional<HostTensor> &psum,
                                  int64_t rows, int64_t alignment = 128);

/// TileKernels 2.1's swiglu_forward (tk21_ops §3.8): per valid row t and
/// column j < H of x (T, 2H) = (gate l | value r), bf16 or f32, H % 64 ==
/// 0: with a clamp c, l = min(l, c) and r = clamp(r, -c, c) (counted
/// before: clamped_count[0] += #(l > c), [1] += #(r > c), [2] += #(r <
/// -c), [3] += valid rows x H); a = l / (1 + expf(-l)) * r; with weights,
/// a *= topk_weights[t] * routed_scaling_factor (1.0 when not given). `fmt`
/// 'bf16' (RNE) or 'fp32'. Rows that are not valid (psum padding, rows past
/// the last expert) are not written by the kernel: here they are 0.
HostTensor swiglu_forward_ref(
    const HostTensor &x, std::string_view fmt,
    const std::optional<HostTensor> &psum_num_tokens_per_expert = std::nullopt,
    const std::optional<HostTensor> &topk_weights = std::nullopt,
    std::optional<float> routed_scaling_factor = std::nullopt,
    std::optional<float> clamp_value = std::nullopt,
    const std::optional<HostTensor> &clamped_count = std::nullopt,
    int64_t token_alignment = 128);

/// TileKernels 2.1's swiglu_forward_and_per_token_cast (tk21_ops §3.8, the
/// 2.1 argument form): swiglu_forward_ref's f32 activation (before any
/// rounding), then a per-token (1, num_per_channels) e4m3 cast, 32 or 128
/// channels a group, with §3.3's scale layouts. Rows that are not valid
/// are not written by the kernel: here they quantize zeros, to be left out
/// of a comparison. (1.0's form is swiglu_forward_and_per_token_cast_ref.)
QuantTensor swiglu_forward_and_per_token_cast_21_ref(
    const HostTensor &x, std::string_view fmt, int64_t num_per_channels,
    const std::optional<HostTensor> &psum_num_tokens_per_expert = std::nullopt,
    const std::optional<HostTensor> &topk_weights = std::nullopt,
    std::optional<float> routed_scaling_factor = std::nullopt,
    bool use_tma_aligned_col_major_sf = false, bool round_sf = false,
    bool use_packed_ue8m0 = false,
    std::optional<float> clamp_value = std::nullopt,
    const std::optional<HostTensor> &clamped_count = std::nullopt,
    int64_t token_alignment = 128);

/// The outputs of swiglu_backward_ref (2.1): x_grad always, weight_grad
/// with topk_weights, act_out with do_recompute (default, shapeless
/// HostTensors otherwise).
struct SwigluBackward21Result {
  HostTensor x_grad, weight_grad, act_out;
};

/// TileKernels 2.1's plain swiglu_backward (tk21_ops §3.9), in its exact
/// float32 order: per row t and column j < H of x (T, 2H) = (l | r), bf16 or
/// f32, H % 64 == 0, and act_x_grad (T, H) of x's dtype: clamp flags before
/// clamping, s = 1 / (1 + expf(-l)), gs = g * w * s (w = topk_weights[t] *
/// routed_scaling_factor, or 1), dl = (gs * r) * fma(l, 1 - s, 1) (+0 where
/// l was clamped), dr = gs * l (+0 where r was); silu by one Newton step
/// from l * s; act_out = silu * r * w; weight_grad[t] = rsf * sum_j g *
/// silu * r (summed in float64: TileKernels' 64-thread order is compared
/// with a tolerance). Padding rows of psum ([psum[e - 1], align(psum[e - 1],
/// alignment)) for every e, after the last expert too) are all 0; other
/// rows, past the experts included, are computed. Outputs in `fmt` ('bf16'
/// or 'fp32'); weight_grad f32 (T,).
SwigluBackward21Result swiglu_backward_ref(
    const HostTensor &x, const HostTensor &act_x_grad, std::string_view fmt,
    const std::optional<HostTensor> &psum_num_tokens_per_expert = std::nullopt,
    const std::optional<HostTensor> &topk_weights = std::nullopt,
    std::optional<float> routed_scaling_factor = std::nullopt,
    std::optional<float> clamp_value = std::nullopt, bool do_recompute = false,
    int64_t token_alignment = 128);

/// Per row of `rows`, whether it is psum padding: [psum[e - 1],
/// align(psum[e - 1], alignment)) for e = 0 .. E (psum[-1] = 0), so the
/// rows after the last expert up to its aligned end are padding too.
std::vector<bool> psum_padding_rows(const std::optional<HostTensor> &psum,
                                    int64_t rows, int64_t alignment = 128);

/// The outputs of swiglu_backward_and_per_token_cast_21_ref: x_grad bf16
/// (T, 2H) always, its e4m3 cast, weight_grad f32 (T,) with topk_weights,
/// act_out bf16 (T, H) with do_recompute (shapeless otherwise).
struct SwigluBackwardCast21Result {
  HostTensor x_grad;
  QuantTensor x_grad_fp8;
  HostTensor weight_grad, act_out;
};

/// TileKernels 2.1's FP8 swiglu_backward_and_per_token_cast (tk21_ops
/// §3.9): x e4m3 (T, 2H), H % 64 == 0, with f32 row-major scales (T, 2H /
/// bk), bk 32 or 128 dividing H, dequantized (an f32 product); act_x_grad
/// bf16 or f32 (T, H). swiglu_backward_ref's f32 results of those, x_grad
/// and act_out rounded to bf16, and the f32 x_grad cast per token to e4m3
/// in groups of num_per_channels (32 or 128, dividing H; amax clamp 1e-4;
/// §3.3's layouts). Every scale of a psum padding row is 0.
SwigluBackwardCast21Result swiglu_backward_and_per_token_cast_21_ref(
    const QuantTensor &x, const HostTensor &act_x_grad,
    int64_t num_per_channels,
    const std::optional<HostTensor> &psum_num_tokens_per_expert = std::nullopt,
    const std::optional<HostTensor> &topk_weights = std::nullopt,
    std::optional<float> routed_scaling_factor = std::nullopt,
    std::optional<float> clamp_value = std::nullopt, bool do_recompute = false,
    int64_t token_alignment = 128, bool use_tma_aligned_col_major_sf = false,
    bool round_sf = false, bool use_packed_ue8m0 = false);

/// The outputs of swiglu_backward_and_per_token_cast_ref.
struct SwigluBackwardResult {
  HostTensor out;         // bf16 (E, H): act * w
  QuantTensor x_grad_fp8; // e4m3 (E, 2H), float32 (E, 2H / bk) sf
  HostTensor x_grad;      // bf16 (E, 2H)
  HostTensor weight_grad; // float32 (T, k)
};

/// §11.2: the SwiGLU backward of a per-token quantized x, its (1, bk) e4m3
/// re-quantized gradient, and the routing-weight gradient.
SwigluBackwardResult swiglu_backward_and_per_token_cast_ref(
    const QuantTensor &x, const HostTensor &grad_out, const HostTensor &weight,
    const HostTensor &pos_to_token_topk, const HostTensor &token_topk_to_pos,
    int64_t num_per_channels, bool round_sf = false,
    std::optional<float> swiglu_clamp_value = std::nullopt);

/// §11.3: act rounded to bf16, then a (bm, 1) e4m3 cast; data (H, M)
/// contiguous, or (M, H) with `without_transpose`; sf float32 (M / bm, H).
QuantTensor swiglu_forward_and_per_channel_cast_and_transpose_ref(
    const HostTensor &x, std::string_view fmt, int64_t num_per_tokens,
    bool round_sf = false, bool without_transpose = false,
    std::optional<float> swiglu_clamp_value = std::nullopt);

// --- TileKernels 2.1's RMSNorm (tk21_ops.md §3.10, §3.11) -------------------

struct NormForwardResult {
  HostTensor out;        ///< x's dtype and shape
  HostTensor rstd;       ///< f32, x's shape without its last dimension
  HostTensor norm_input; ///< x + residual in x's dtype (residual_out), or x
};

/// RMSNorm of the rows of x (bf16 or f32, (T, H) or (B, T, H), contiguous,
/// H a multiple of 16 up to 8192): h = x (+ residual, rounded to x's
/// dtype), rstd = 1 / sqrt(sum(h^2) / H + eps) (the sum in float64, rounded
/// once; TileKernels' fp32 tree and rsqrtf differ within its tolerance),
/// out = (h * rstd) * (weight * out_scale) rounded to x's dtype (weight
/// None: 1). weight: (H,) of x's dtype.
NormForwardResult
norm_forward_ref(const HostTensor &x, const std::optional<HostTensor> &weight,
                 float eps,
                 const std::optional<HostTensor> &residual = std::nullopt,
                 float out_scale = 1.0f);

struct NormForwardCastResult {
  QuantTensor out;       ///< e4m3 data and scales, per_token_cast's layouts
  HostTensor out_bf16;   ///< bf16 of the f32 output, if with_out_bf16
  HostTensor rstd;       ///< as norm_forward_ref's
  HostTensor norm_input; ///< as norm_forward_ref's
};

/// per_token_cast_ref of norm_forward_ref's output (e4m3, 32 channels a
/// scale; fmt and num_per_channels must be those), and with with_out_bf16
/// the f32 output rounded once to bf16. 2-D x only (the 3-D form's per-batch
/// scale layouts are not reproduced); no mega_moe_sf.
NormForwardCastResult norm_forward_and_per_token_cast_ref(
    const HostTensor &x, const std::optional<HostTensor> &weight, float eps,
    std::string_view fmt = "e4m3", int64_t num_per_channels = 32,
    const std::optional<HostTensor> &residual = std::nullopt,
    float out_scale = 1.0f, bool use_tma_aligned_col_major_sf = false,
    bool round_sf = false, bool use_packed_ue8m0 = false,
    bool with_out_bf16 = false);

struct NormBackwardResult {
  HostTensor x_grad;      ///< x's dtype and shape
  HostTensor weight_grad; ///< the given one (accumulated into), a new one of
                          ///< weight's dtype, or empty without weight
};

/// RMSNorm's backward (§3.11) of x (the forward's norm_input: bf16 or f32
/// (T, H), H a multiple of 32 up to 8192): xh = x * rstd, go = out_grad *
/// out_scale, gw = go * weight (or go), dx = (gw - xh * (sum(xh * gw) /
/// H)) * rstd (+ residual_out_grad) in x's dtype, weight_grad += sum over
/// rows of xh * go (sums in float64). rstd: f32 (T,).
NormBackwardResult norm_backward_ref(
    const HostTensor &out_grad, const HostTensor &x,
    const std::optional<HostTensor> &weight, const HostTensor &rstd,
    const std::optional<HostTensor> &residual_out_grad = std::nullopt,
    float out_scale = 1.0f,
    const std::optional<HostTensor> &weight_grad = std::nullopt);

} // namespace tilejit::quant
