// norm_ref.cpp - CPU references of TileKernels 2.1's RMSNorm ops
// (shared/specs/tk21_ops.md §3.10, §3.11): norm_forward (an optional
// residual added in x's dtype, rstd = 1 / sqrt(mean of squares + eps), the
// weighted and scaled output in x's dtype), norm_forward_and_per_token_cast
// (that output cast per token, 32 channels a scale) and norm_backward (the
// gradients of x and of the weight). TileKernels compares these with a
// tolerance (its kernel sums in an fp32 tree and uses rsqrtf): the sums here
// are in float64, rounded once.
#include "quant/detail.h"

#include "common/convert.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tilejit::quant {

using detail::fail;

namespace {

constexpr std::string_view fwd = "norm_forward_ref";
constexpr std::string_view bwd = "norm_backward_ref";

float load(const HostTensor &t, int64_t i) {
  return t.dtype() == DType::bf16 ? ref::bf16_to_f32(t.data<uint16_t>()[i])
                                  : t.data<float>()[i];
}

void store(HostTensor &t, int64_t i, float v) {
  if (t.dtype() == DType::bf16)
    t.data<uint16_t>()[i] = ref::f32_to_bf16(v);
  else
    t.data<float>()[i] = v;
}

/// v rounded to `dtype` (bf16 RNE, or f32 as is).
float round_to(DType dtype, float v) {
  return dtype == DType::bf16 ? ref::bf16_to_f32(ref::f32_to_bf16(v)) : v;
}

/// x: contiguous bf16 or f32 with rows of H, 0 < H <= 8192, H a multiple of
/// `multiple`; `like` tensors of its dtype and shape (null: not given),
/// `weight` (H,).
int64_t check_rows(
    std::string_view fn, const HostTensor &x, int64_t multiple,
    std::initializer_list<int> ranks,
    std::initializer_list<std::pair<std::string_view, const HostTensor *>> like,
    const std::optional<HostTensor> &weight) {
  detail::check_dtype(fn, "x", x, {DType::bf16, DType::f32});
  if (std::find(ranks.begin(), ranks.end(), x.rank()) == ranks.end())
    fail(fn, fmt::format("argument 'x' has shape [{}]; requires (T, H){}",
                         fmt::join(x.shape(), ", "),
                         ranks.size() > 1 ? " or (B, T, H)" : ""));
  detail::check_contiguous(fn, "x", x);
  const int64_t h = x.size(x.rank() - 1);
  if (h < 1 || h > 8192 || h % multiple != 0)
    fail(fn, fmt::format("argument 'x' has rows of {}; requires 1 to 8192 "
                         "elements, a multiple of {}",
                         h, multiple));
  for (auto [arg, t] : like) {
    if (!t)
      continue;
    if (t->dtype() != x.dtype() || t->shape() != x.shape())
      fail(fn, fmt::format("argument '{}' is {}[{}]; requires x's {}[{}]", arg,
                           name_of(t->dtype()), fmt::join(t->shape(), ", "),
                           name_of(x.dtype()), fmt::join(x.shape(), ", ")));
    detail::check_contiguous(fn, arg, *t);
  }
  if (weight) {
    if (weight->dtype() != x.dtype() || weight->rank() != 1 ||
        weight->size(0) != h)
      fail(fn, fmt::format("argument 'weight' is {}[{}]; requires {}[{}] (x's "
                           "dtype, a value a column)",
                           name_of(weight->dtype()),
                           fmt::join(weight->shape(), ", "), name_of(x.dtype()),
                           h));
    detail::check_contiguous(fn, "weight", *weight);
  }
  return h;
}

/// The tensor of an optional argument, or null.
const HostTensor *given(const std::optional<HostTensor> &t) {
  return t ? &*t : nullptr;
}

/// The output before its rounding, row by row, and what norm_forward keeps.
struct Forward {
  std::vector<float> y32;
  HostTensor rstd, norm_input;
};

Forward forward(const HostTensor &x, const std::optional<HostTensor> &weight,
                float eps, const std::optional<HostTensor> &residual,
                float out_scale, int64_t h) {
  const int64_t rows = x.numel() / h;
  std::vector<int64_t> lead(x.shape().begin(), x.shape().end() - 1);
  Forward f{std::vector<float>(static_cast<size_t>(x.numel())),
            HostTensor::zeros(DType::f32, lead),
            HostTensor::zeros(x.dtype(), x.shape())};
  for (int64_t r = 0; r < rows; ++r) {
    double squares = 0;
    for (int64_t j = 0; j < h; ++j) {
      const int64_t i = r * h + j;
      // The residual added in f32 and rounded to x's dtype (bf16: one RNE
      // of an exact sum), stored as residual_out.
      float v = load(x, i);
      if (residual)
        v = round_to(x.dtype(), v + load(*residual, i));
      store(f.norm_input, i, v);
      squares += static_cast<double>(v) * v;
    }
    const float mean = static_cast<float>(squares) / static_cast<float>(h);
    const float rstd = 1.0f / std::sqrt(mean + eps);
    f.rstd.data<float>()[r] = rstd;
    for (int64_t j = 0; j < h; ++j) {
      const int64_t i = r * h + j;
      const float scale = weight ? load(*weight, j) * out_scale : out_scale;
      f.y32[static_cast<size_t>(i)] = (load(f.norm_input, i) * rstd) * scale;
    }
  }
  return f;
}

} // namespace

NormForwardResult norm_forward_ref(const HostTensor &x,
                                   const std::optional<HostTensor> &weight,
                                   float eps,
                                   const std::optional<HostTensor> &residual,
                                   float out_scale) {
  const int64_t h =
      check_rows(fwd, x, 16, {2, 3}, {{"residual", given(residual)}}, weight);
  Forward f = forward(x, weight, eps, residual, out_scale, h);
  HostTensor out = HostTensor::zeros(x.dtype(), x.shape());
  for (int64_t i = 0; i < x.numel(); ++i)
    store(out, i, f.y32[static_cast<size_t>(i)]);
  return {std::move(out), std::move(f.rstd), std::move(f.norm_input)};
}

NormForwardCastResult norm_forward_and_per_token_cast_ref(
    const HostTensor &x, const std::optional<HostTensor> &weight, float eps,
    std::string_view fmt, int64_t num_per_channels,
    const std::optional<HostTensor> &residual, float out_scale,
    bool use_tma_aligned_col_major_sf, bool round_sf, bool use_packed_ue8m0,
    bool with_out_bf16) {
  constexpr std::string_view fn = "norm_forward_and_per_token_cast_ref";
  if (fmt != "e4m3" || num_per_channels != 32)
    fail(fn, fmt::format("arguments 'fmt' and 'num_per_channels' are '{}' "
                         "and {}; requires 'e4m3' and 32",
                         fmt, num_per_channels));
  const int64_t h =
      check_rows(fn, x, 16, {2}, {{"residual", given(residual)}}, weight);
  Forward f = forward(x, weight, eps, residual, out_scale, h);
  // The cast of the output in x's dtype: its amax is that of the rounded
  // values (rounding is monotone), as the kernel's of |y32| rounded.
  HostTensor y = HostTensor::zeros(x.dtype(), x.shape());
  HostTensor out_bf16;
  if (with_out_bf16)
    out_bf16 = HostTensor::zeros(DType::bf16, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float v = f.y32[static_cast<size_t>(i)];
    store(y, i, v);
    if (with_out_bf16) // one rounding of the f32 value
      out_bf16.data<uint16_t>()[i] = ref::f32_to_bf16(v);
  }
  QuantTensor q = per_token_cast_ref(y, "e4m3", 32, std::nullopt,
                                     use_tma_aligned_col_major_sf, round_sf,
                                     use_packed_ue8m0);
  return {std::move(q), std::move(out_bf16), std::move(f.rstd),
          std::move(f.norm_input)};
}

NormBackwardResult norm_backward_ref(
    const HostTensor &out_grad, const HostTensor &x,
    const std::optional<HostTensor> &weight, const HostTensor &rstd,
    const std::optional<HostTensor> &residual_out_grad, float out_scale,
    const std::optional<HostTensor> &weight_grad) {
  const int64_t h =
      check_rows(bwd, x, 32, {2},
                 {{"out_grad", &out_grad},
                  {"residual_out_grad", given(residual_out_grad)}},
                 weight);
  const int64_t rows = x.size(0);
  if (rstd.dtype() != DType::f32 || rstd.rank() != 1 || rstd.size(0) != rows)
    fail(bwd, fmt::format("argument 'rstd' is {}[{}]; requires f32[{}] (a "
                          "value a row of x)",
                          name_of(rstd.dtype()), fmt::join(rstd.shape(), ", "),
                          rows));
  if (weight_grad) {
    if (!weight)
      fail(bwd, "argument 'weight_grad' is given without 'weight'; requires "
                "both");
    if ((weight_grad->dtype() != DType::bf16 &&
         weight_grad->dtype() != DType::f32) ||
        weight_grad->rank() != 1 || weight_grad->size(0) != h)
      fail(bwd, fmt::format("argument 'weight_grad' is {}[{}]; requires "
                            "bf16 or f32[{}]",
                            name_of(weight_grad->dtype()),
                            fmt::join(weight_grad->shape(), ", "), h));
  }
  NormBackwardResult r{HostTensor::zeros(x.dtype(), x.shape()), {}};
  std::vector<double> dw(static_cast<size_t>(h), 0.0);
  std::vector<float> xh(static_cast<size_t>(h)), gw(static_cast<size_t>(h));
  for (int64_t row = 0; row < rows; ++row) {
    const float s = rstd.data<float>()[row];
    double dot = 0;
    for (int64_t j = 0; j < h; ++j) {
      const int64_t i = row * h + j;
      const size_t c = static_cast<size_t>(j);
      xh[c] = load(x, i) * s;
      const float go = load(out_grad, i) * out_scale;
      gw[c] = weight ? go * load(*weight, j) : go;
      if (weight)
        dw[c] += static_cast<double>(xh[c]) * go;
      dot += static_cast<double>(xh[c]) * gw[c];
    }
    const float mean = static_cast<float>(dot) / static_cast<float>(h);
    for (int64_t j = 0; j < h; ++j) {
      const int64_t i = row * h + j;
      const size_t c = static_cast<size_t>(j);
      float dx = (gw[c] - xh[c] * mean) * s;
      if (residual_out_grad)
        dx += load(*residual_out_grad, i);
      store(r.x_grad, i, dx);
    }
  }
  if (weight) {
    // Accumulated into a given weight_grad, else a new one of the weight's
    // dtype.
    r.weight_grad =
        weight_grad ? *weight_grad : HostTensor::zeros(weight->dtype(), {h});
    for (int64_t j = 0; j < h; ++j)
      store(r.weight_grad, j,
            static_cast<float>(load(r.weight_grad, j) + dw[j]));
  }
  return r;
}

} // namespace tilejit::quant
