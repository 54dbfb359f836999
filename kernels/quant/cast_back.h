// cast_back.h - Dequantization of e4m3 or packed e2m1 data with bm x bk
// block scales (shared/specs/quant_transpose.md §6); declared in
// cast_back.cpp on per_token_cast_back's kernel, the CPU reference is
// cast_back_ref in reference.h.
#pragma once

#include "op/op_def.h"

namespace tilejit::quant {

/// out[m, j] = out_dtype(float(x_data[m, j]) * sf[m / bm, j / bk]), the
/// product in f32, bf16 rounded to nearest even. x_data: contiguous e4m3
/// (M, K), int8 (M, K / 2) of packed fp4 e2m1 codes, or uint8 (M, 3K / 2)
/// of E5M6 codes (x_special_fmt e5m6), K % 64 == 0; x_sf:
/// float32 (ceil(M / bm), ceil(K / bk)) of any strides, or int32 packed UE8M0
/// (ceil(M / bm), ceil(nK / 4)); bm 1, 32 or 128; bk 1, 16, 32, 64, 128 or
/// K; out: contiguous bf16 or f32 (M, K). Bit-exact against the reference.
/// Throws UserError naming the argument, its value and the requirement;
/// nothing is written then.
void cast_back(const rt::TensorView &x_data, const rt::TensorView &x_sf,
               int64_t bm, int64_t bk, const rt::TensorView &out,
               CUstream stream = nullptr);

const ops::OpDef &cast_back_op();

} // namespace tilejit::quant
