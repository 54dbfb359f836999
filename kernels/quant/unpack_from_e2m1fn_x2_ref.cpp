// unpack_from_e2m1fn_x2_ref.cpp - unpack_from_e2m1fn_x2 (§13): packed fp4
// bytes to floats, low nibble first.
#include "quant/detail.h"

#include "common/convert.h"

#include <cstring>
#include <fmt/format.h>
#include <vector>

namespace tilejit::quant {

HostTensor unpack_from_e2m1fn_x2_ref(const HostTensor &x, DType out_dtype) {
  constexpr std::string_view fn = "unpack_from_e2m1fn_x2_ref";
  detail::check_dtype(fn, "x", x, {DType::i8, DType::u8});
  if (x.rank() < 1)
    detail::fail(fn, "argument 'x' has shape []; requires ndim >= 1");
  if (out_dtype != DType::f32 && out_dtype != DType::f16 &&
      out_dtype != DType::bf16 && out_dtype != DType::f64)
    detail::fail(fn, fmt::format("argument 'out_dtype' is {}; requires f32, "
                                 "f16, bf16 or f64",
                                 name_of(out_dtype)));
  std::vector<int64_t> shape = x.shape();
  shape.back() *= 2;
  HostTensor out = HostTensor::zeros(out_dtype, shape);
  const HostTensor bytes = x.clone(); // contiguous, row-major order
  const uint8_t *in = bytes.numel() ? bytes.data<uint8_t>() : nullptr;
  std::byte *dst = out.raw();
  const size_t width = size_of(out_dtype);
  for (int64_t i = 0; i < 2 * bytes.numel(); ++i) {
    const uint8_t code = i % 2 == 0 ? in[i / 2] & 0xF : in[i / 2] >> 4;
    const float v = ref::e2m1_to_f32(code); // exact in every out dtype
    if (out_dtype == DType::f32) {
      std::memcpy(dst + i * width, &v, width);
    } else if (out_dtype == DType::f64) {
      const double d = v;
      std::memcpy(dst + i * width, &d, width);
    } else {
      const uint16_t h =
          out_dtype == DType::bf16 ? ref::f32_to_bf16(v) : ref::f32_to_f16(v);
      std::memcpy(dst + i * width, &h, width);
    }
  }
  return out;
}

} // namespace tilejit::quant
