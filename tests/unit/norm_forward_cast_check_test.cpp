// norm_forward_cast_check_test.cpp - norm_forward_and_per_token_cast's case
// table compares its quantized outputs in its own way (bitwise against
// per_token_cast of the GPU's out_bf16, else within e4m3's step of the
// reference's y): those compares pass the reference's own outputs and catch
// a wrong data byte, a wrong scale and a packed pad byte that is not 0.
#include "op_test.h"
#include "run.h"

#include <catch2/catch.hpp>

using namespace tilejit;

namespace {

harness::Prepared prepared(DType dtype, bool out_bf16, bool packed) {
  const ops::OpDef &op = *ops::find_op("norm_forward_and_per_token_cast");
  const char *flag = packed ? "true" : "false";
  // 4128 columns: 129 scales, a packed last word with 3 pad bytes.
  const harness::Case c{.label = "",
                        .shape = {20, 4128},
                        .set = {{"out_bf16", out_bf16 ? "passed" : "none"},
                                {"use_tma_aligned_col_major_sf", flag},
                                {"round_sf", flag},
                                {"use_packed_ue8m0", flag}},
                        .dtypes = {{"x", dtype}}};
  return harness::Prepared::make(harness::resolve(op, c), 11);
}

} // namespace

TEST_CASE("norm_forward_and_per_token_cast's compares pass its reference's "
          "outputs and catch wrong bytes",
          "[kernels]") {
  struct Form {
    DType dtype;
    bool out_bf16, packed;
  };
  for (Form f : {Form{DType::bf16, true, true}, Form{DType::bf16, true, false},
                 Form{DType::bf16, false, true}, Form{DType::f32, false, true},
                 Form{DType::f32, true, false}}) {
    INFO("dtype " << name_of(f.dtype) << ", out_bf16 " << f.out_bf16
                  << ", packed " << f.packed);
    const harness::Prepared p = prepared(f.dtype, f.out_bf16, f.packed);
    const std::vector<ref::HostTensor> &want = p.data().expected;
    REQUIRE(want.size() == 5); // out, out_sf, out_bf16, residual_out, rstd
    const harness::RunResult same = p.check(want);
    INFO(same.check);
    CHECK(same.passed);

    auto copy = [&] {
      std::vector<ref::HostTensor> outs;
      for (const ref::HostTensor &t : want)
        outs.push_back(t.raw() ? t.clone() : ref::HostTensor{});
      return outs;
    };
    // A data byte's exponent changed.
    std::vector<ref::HostTensor> data = copy();
    data[0].at<uint8_t>({3, 5}) ^= 0x40;
    CHECK_FALSE(p.check(data).passed);
    // One scale off: a packed byte one up, or an f32 scale x 1.5.
    std::vector<ref::HostTensor> scale = copy();
    if (f.packed)
      scale[1].at<int32_t>({7, 2}) += 1;
    else
      scale[1].at<float>({7, 2}) *= 1.5f;
    CHECK_FALSE(p.check(scale).passed);
    if (f.packed) { // byte 1 of word 32 is scale 129: a pad byte
      std::vector<ref::HostTensor> pad = copy();
      pad[1].at<int32_t>({2, 32}) |= 0x7f00;
      const harness::RunResult r = p.check(pad);
      CHECK_FALSE(r.passed);
      if (!(f.dtype == DType::bf16 && f.out_bf16))
        CHECK_THAT(r.check, Catch::Matchers::Contains(
                                "row 2: pad byte 129 of the packed scales is "
                                "0x7f; expected 0"));
    }
  }
}
