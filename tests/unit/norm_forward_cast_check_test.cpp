// norm_forward_cast_check_test.cpp - norm_forward_and_per_token_cast's case
// table compares its quantized outputs in its own way (bitwise against
// per_token_cast of the GPU's out_bf16, else within e4m3's step of the
// reference's y): those compares pass the reference's own outputs and catch
// a wrong data byte, a wrong scale and a packed pad byte that is not 0.
#include "op_test.h"
#include "quant/norm_forward.h"
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
    REQUIRE(want.size() == 6); // out, out_sf, out_bf16, residual_out, rstd,
                               // mega_moe_sf
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

TEST_CASE("norm_forward_and_per_token_cast's mega_moe_sf compare: each "
          "token's scales in its row, the other rows untouched",
          "[kernels]") {
  const ops::OpDef &op = *ops::find_op("norm_forward_and_per_token_cast");
  const harness::Case c{.label = "",
                        .shape = {20, 1024},
                        .set = {{"use_tma_aligned_col_major_sf", "true"},
                                {"round_sf", "true"},
                                {"use_packed_ue8m0", "true"},
                                {"mega_moe_sf", "passed"},
                                {"mega_moe_block_m", "8"}}};
  const harness::Prepared p =
      harness::Prepared::make(harness::resolve(op, c), 12);
  std::vector<ref::HostTensor> outs;
  for (const ref::HostTensor &t : p.data().expected)
    outs.push_back(t.raw() ? t.clone() : ref::HostTensor{});
  ref::HostTensor &mega = outs[5];
  // 3 blocks of 8 tokens, 128 rows each; 8 words a row.
  REQUIRE(mega.shape() == std::vector<int64_t>{384, 8});
  std::vector<bool> hit(384);
  for (int64_t t = 0; t < 20; ++t)
    hit[static_cast<size_t>(quant::mega_moe_row(t, 8))] = true;
  CHECK(quant::mega_moe_row(9, 8) == 128 + 4); // i = 1: (i % 32) * 4
  for (int64_t row = 0; row < 384; ++row)
    for (int64_t w = 0; w < 8; ++w)
      if (!hit[static_cast<size_t>(row)])
        mega.at<int32_t>({row, w}) = -1; // the poison the kernel leaves
  const harness::RunResult same = p.check(outs);
  INFO(same.check);
  CHECK(same.passed);
  std::vector<ref::HostTensor> moved = outs;
  moved[5] = mega.clone();
  moved[5].at<int32_t>({quant::mega_moe_row(9, 8), 3}) ^= 1;
  CHECK_FALSE(p.check(moved).passed);
  std::vector<ref::HostTensor> extra = outs;
  extra[5] = mega.clone();
  extra[5].at<int32_t>({1, 0}) = 0; // row 1 is no token's (token 0: row 0)
  const harness::RunResult r = p.check(extra);
  CHECK_FALSE(r.passed);
  CHECK_THAT(r.check,
             Catch::Matchers::Contains("row 1 (no token's) was written"));
}
