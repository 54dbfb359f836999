// per_token_cast_back.h - Dequantization of per-token e4m3 data to bf16 or
// f32 (shared/specs/quant_transpose.md §6, per_token_cast_back); declared
// in per_token_cast_back.cpp, the CPU reference is per_token_cast_back_ref.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

#include <optional>
#include <string_view>

namespace tilejit::quant {

/// out[m, j] = out_dtype(float(x_data[m, j]) * sf[m, j / num_per_channels])
/// in f32, rounded to nearest even to bf16: the inverse of per_token_cast.
/// x_data: contiguous e4m3 (M, K), int8 (M, K / 2) of packed fp4 e2m1
/// codes (the even element in the low nibble), or uint8 (M, 3K / 2) of
/// E5M6 codes (x_special_fmt e5m6, §7; 4-byte aligned), K % 64 == 0; x_sf:
/// float32 (M, groups) of any strides (row- or column-major), or int32 (M,
/// ceil(groups / 4))
/// holding packed UE8M0 bytes; num_per_channels 16, 32, 64, 128 or K; out:
/// contiguous bf16 or f32 (M, K). Bit-exact against the reference. Throws
/// UserError naming the argument, its value and the requirement; nothing is
/// written then.
void per_token_cast_back(const rt::TensorView &x_data,
                         const rt::TensorView &x_sf, int64_t num_per_channels,
                         const rt::TensorView &out, CUstream stream = nullptr);

const ops::OpDef &per_token_cast_back_op();

/// Static parameters of a per_token_cast_back (and cast_back) kernel.
struct CastBackSpec {
  DType out_dtype = DType::bf16;
  int32_t e2m1 = 0; ///< 1: packed fp4 data, int8 (M, K / 2); 0: e4m3 (M, K)
  /// 1: E5M6 data (x_special_fmt e5m6), u8 (M, 3K / 2) read as its u32
  /// words (M, 3K / 8), 8 codes in 3
  int32_t e5m6 = 0;
  /// Rows a scale covers: 1 (per token), 32 or 128 (dividing block_m)
  int32_t bm = 1;
  /// Channels a scale: 1 .. 128 (a tile holds whole groups or lies within
  /// one), or 0 (one scale a row).
  int32_t group = 128;
  int32_t packed = 0; ///< 1: UE8M0 scale bytes, four to an int32
  /// A block_m x block_k tile: block_m rows hold at least one scale for
  /// each of the threads (a fragment has at least an element a thread);
  /// 32 columns (the cold compile: about 55 ms against 100 ms with 64, the
  /// bounds-checked row tails are straight-line code per element), 64 for
  /// large tensors (cast_back_spec).
  int32_t block_m = 128;
  int32_t block_k = 32;
  int32_t threads = 128;
  int32_t vector_bytes = 0; ///< 16: rows of data and out 16-byte aligned
};
TILEJIT_SPEC_FIELDS(CastBackSpec, out_dtype, e2m1, e5m6, bm, group, packed,
                    block_m, block_k, threads, vector_bytes)

/// The kernel in the DSL (per_token_cast_back.dsl.cpp); cast_back's too.
Kernel per_token_cast_back_kernel(const CastBackSpec &spec);

/// What cast_back and per_token_cast_back share, for scales of bm x bk:
/// the spec of a call, the tensors (x_data, x_sf, out), their layouts
/// (x_data by its dtype, x_sf of ceil(M / bm) x ceil(K / bk) scales) and the
/// scales as the kernel takes them (f32 (M', nK) as (M', bm, nK), packed
/// int32 (M', W) as bytes (M', bm, W, 4), the bm dimension of stride 0).
CastBackSpec cast_back_spec(const ops::Call &c, int64_t bm, int64_t bk);
std::vector<ops::TensorDecl> cast_back_tensors();
/// The x_special_fmt parameter ("none" or "e5m6") and its check against
/// x_data's dtype (u8 exactly for e5m6).
ops::ParamDecl x_special_fmt_param();
void check_x_special_fmt(const ops::Call &c);
/// The reference's x_special_fmt from a call's parameter.
std::optional<std::string_view> x_special_fmt_of(const ops::HostCall &c);
/// (M, K) from a shape-less quantized `x_data`'s dtype and shape (e4m3
/// (M, K), packed e2m1 (M, K / 2), e5m6 bytes (M, 3K / 2)): the
/// OpDef::dims_from_inputs of cast_back, per_token_cast_back and
/// per_block_cast_lossless.
std::vector<std::pair<std::string, int64_t>>
quantized_data_dims(const ops::Call &c);
ops::TensorShape cast_back_shape(std::string_view tensor,
                                 const ops::ShapeArgs &a, int64_t bm,
                                 int64_t bk);
void cast_back_views(const ops::Call &c, const CastBackSpec &s,
                     ops::KernelArgs &args);

} // namespace tilejit::quant
