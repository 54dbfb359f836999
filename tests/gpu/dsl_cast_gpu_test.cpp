// dsl_cast_gpu_test.cpp - The DSL's narrow formats on the GPU, bit for bit
// against kernels/common/convert.h: fp4 e2m1 codes and nibble packing both
// ways, E5M6 codes, words and values.
#include "dsl_gpu.h"

#include "common/abi.h"
#include "common/convert.h"
#include "common/jit.h"

#include "tilejit/compiler/dsl.h"
#include "tilejit/runtime/buffer.h"
#include "tilejit/runtime/launch.h"
#include "tilejit/runtime/stream.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace tilejit;
using namespace tilejit::dsl_gpu;

namespace {

/// x (rows, 64) f32 -> e2m1 codes packed two a byte, out (rows, 32) u8.
Kernel e2m1_kernel(dsl::E2m1Encode how) {
  dsl::KernelBuilder k("e2m1", 256);
  auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
  auto out = k.tensor("out", DType::u8, 2);
  auto row = k.block_id(0) * k.index(kRows);
  auto t = k.load(x, {row, k.index(0)}, {kRows, kCols});
  k.store(k.pack_nibbles(k.to_e2m1(t, how)), out, {row, k.index(0)});
  return k.build();
}

} // namespace

TEST_CASE("to_e2m1 and pack_nibbles match the reference on every rounding "
          "boundary",
          "[dsl][cast]") {
  const auto how = GENERATE(dsl::E2m1Encode::select, dsl::E2m1Encode::least);
  const bool least = how == dsl::E2m1Encode::least;
  INFO((least ? "E2m1Encode::least" : "E2m1Encode::select"));
  const ops::LoadedKernel &kernel =
      ops::load_kernel(ops::make_key(least ? "test_e2m1_least" : "test_e2m1"),
                       [how] { return e2m1_kernel(how); });
  // Every midpoint and representable value, a float either side, of both
  // signs; zeros, infinities, NaNs, subnormals, huge values; then random
  // values over [-8, 8). 37 rows: the last block has a tail.
  std::vector<float> special;
  for (float v :
       {0.0f, 0.25f, 0.5f, 0.75f, 1.0f, 1.25f, 1.5f,   1.75f, 2.0f,     2.5f,
        3.0f, 3.5f,  4.0f, 5.0f,  6.0f, 7.0f,  1e-40f, 1e30f, INFINITY, NAN})
    for (float s : {v, -v})
      for (float w :
           {s, std::nextafter(s, -INFINITY), std::nextafter(s, INFINITY)})
        special.push_back(w);
  const int64_t rows = 37;
  std::vector<float> x = uniform_rows(rows, -8.0f, 8.0f);
  std::copy(special.begin(), special.end(), x.begin());
  rt::DeviceBuffer dx(x.size() * 4), dout(rows * kCols / 2);
  dx.upload(x.data(), x.size() * 4);
  const int64_t xs[2] = {rows, kCols}, os[2] = {rows, kCols / 2};
  launch_rows(kernel, rows, [&](rt::ArgPack &args) {
    ops::push_tensor(args,
                     rt::TensorView::contiguous(dx.ptr(), DType::f32, xs));
    ops::push_tensor(args,
                     rt::TensorView::contiguous(dout.ptr(), DType::u8, os));
  });
  std::vector<uint8_t> got(rows * kCols / 2);
  dout.download(got.data(), got.size());
  size_t bad = 0;
  for (size_t j = 0; j < got.size(); ++j) {
    uint8_t want = ref::pack_e2m1x2(ref::f32_to_e2m1(x[2 * j]),
                                    ref::f32_to_e2m1(x[2 * j + 1]));
    if (got[j] != want && bad++ < 5)
      UNSCOPED_INFO("pair " << j << " (" << x[2 * j] << ", " << x[2 * j + 1]
                            << "): got " << int(got[j]) << ", want "
                            << int(want));
  }
  CHECK(bad == 0);
}

namespace {

/// in (rows, 32) u8 bytes of packed e2m1 codes -> their f32 values, out
/// (rows, 64), decoded `how`, and the codes re-encoded and re-packed, again
/// (rows, 32).
Kernel e2m1_decode_kernel(dsl::E2m1Decode how) {
  dsl::KernelBuilder k("e2m1_decode", 256);
  auto in = k.tensor("in", DType::u8, 2, dsl::inner_contiguous(16));
  auto out = k.tensor("out", DType::f32, 2, dsl::inner_contiguous(16));
  auto again = k.tensor("again", DType::u8, 2, dsl::inner_contiguous(16));
  auto row = k.block_id(0) * k.index(kRows);
  auto bytes = k.load(in, {row, k.index(0)}, {kRows, kCols / 2});
  auto values = k.from_e2m1(k.unpack_nibbles(bytes), how);
  k.store(values, out, {row, k.index(0)});
  k.store(k.pack_nibbles(k.to_e2m1(values)), again, {row, k.index(0)});
  return k.build();
}

} // namespace

TEST_CASE("unpack_nibbles and from_e2m1 decode every byte as the reference "
          "does",
          "[dsl][cast]") {
  const auto how = GENERATE(dsl::E2m1Decode::select, dsl::E2m1Decode::multiply);
  const bool by_multiply = how == dsl::E2m1Decode::multiply;
  INFO("decoded by " << (by_multiply ? "multiply" : "select"));
  const ops::LoadedKernel &kernel =
      ops::load_kernel(ops::make_key(by_multiply ? "test_e2m1_decode_multiply"
                                                 : "test_e2m1_decode_select"),
                       [how] { return e2m1_decode_kernel(how); });
  // Every byte value, then random bytes; 21 rows: the last block has a tail.
  const int64_t rows = 21, bytes = rows * kCols / 2;
  std::vector<uint8_t> in(bytes);
  std::mt19937_64 gen(Catch::rngSeed());
  for (int64_t i = 0; i < bytes; ++i)
    in[i] = static_cast<uint8_t>(i < 256 ? i : gen() & 0xFF);
  rt::DeviceBuffer din(bytes), dout(bytes * 2 * 4), dagain(bytes);
  din.upload(in.data(), bytes);
  const int64_t bs[2] = {rows, kCols / 2}, vs[2] = {rows, kCols};
  launch_rows(kernel, rows, [&](rt::ArgPack &args) {
    ops::push_tensor(args,
                     rt::TensorView::contiguous(din.ptr(), DType::u8, bs));
    ops::push_tensor(args,
                     rt::TensorView::contiguous(dout.ptr(), DType::f32, vs));
    ops::push_tensor(args,
                     rt::TensorView::contiguous(dagain.ptr(), DType::u8, bs));
  });
  std::vector<float> got(bytes * 2);
  std::vector<uint8_t> again(bytes);
  dout.download(got.data(), got.size() * 4);
  dagain.download(again.data(), bytes);
  size_t bad = 0;
  for (int64_t j = 0; j < bytes; ++j) {
    float want[2] = {ref::e2m1_to_f32(in[j] & 0xF),
                     ref::e2m1_to_f32(in[j] >> 4)};
    for (int h = 0; h < 2; ++h)
      if (std::memcmp(&got[2 * j + h], &want[h], 4) != 0 && bad++ < 5)
        UNSCOPED_INFO("byte " << j << " = " << int(in[j]) << ", nibble " << h
                              << ": got " << got[2 * j + h] << ", want "
                              << want[h]);
    if (again[j] != in[j] && bad++ < 5)
      UNSCOPED_INFO("byte " << j << " = " << int(in[j]) << " re-encoded as "
                            << int(again[j]));
  }
  CHECK(bad == 0);
}

namespace {

/// x (rows, 64) f32 -> E5M6 codes, packed 8 into 3 words, out (rows, 24)
/// u32, the codes decoded again, back (rows, 64) f32, and the words
/// unpacked again, codes (rows, 64) u32. 128 threads: a
/// fragment holds a multiple of the thread count, and a block's words are
/// 16 x 24 = 3 x 128.
Kernel e5m6_kernel() {
  dsl::KernelBuilder k("e5m6", 128);
  auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
  auto out = k.tensor("out", DType::u32, 2);
  auto back = k.tensor("back", DType::f32, 2, dsl::inner_contiguous(16));
  auto unpacked = k.tensor("unpacked", DType::u32, 2);
  auto row = k.block_id(0) * k.index(kRows);
  auto codes = k.to_e5m6(k.load(x, {row, k.index(0)}, {kRows, kCols}));
  auto words = k.pack_e5m6(codes);
  k.store(words, out, {row, k.index(0)});
  k.store(k.from_e5m6(codes), back, {row, k.index(0)});
  k.store(k.unpack_e5m6(words), unpacked, {row, k.index(0)});
  return k.build();
}

} // namespace

TEST_CASE("to_e5m6, pack_e5m6, unpack_e5m6 and from_e5m6 match the "
          "reference bit for bit",
          "[dsl][cast]") {
  const ops::LoadedKernel &kernel = ops::load_kernel(
      ops::make_key("test_e5m6"), [] { return e5m6_kernel(); });
  // The spec's special values (2^-20, 2^-14 x 63/64, 2^-14, 65024), the
  // edges of fp16's range, rounding ties of the 17 low bits, zeros,
  // infinities and NaNs, each of both signs with its neighbours; then random
  // bit patterns (every exponent, NaNs and subnormals too). 45 rows: the last
  // block has a tail.
  std::vector<uint32_t> special_bits;
  for (float v :
       {0.0f, 0x1p-20f, 0x1p-14f * 63 / 64, 0x1p-14f, 65024.0f, 65504.0f,
        65536.0f, 0x1p-24f, 0x1p-25f, 1e-40f, 1.0f, 3.0f, 1e30f, INFINITY, NAN})
    for (float s : {v, -v})
      for (float w :
           {s, std::nextafter(s, -INFINITY), std::nextafter(s, INFINITY)}) {
        uint32_t b;
        std::memcpy(&b, &w, 4);
        special_bits.push_back(b);
      }
  for (uint32_t tie : {0x3F810000u, 0x3F830000u, 0x3F80FFFFu, 0x3F830001u,
                       0x38810000u, 0x33810000u})
    special_bits.push_back(tie);
  const int64_t rows = 45, n = rows * kCols;
  std::vector<uint32_t> bits(n);
  std::mt19937_64 gen(Catch::rngSeed());
  for (int64_t i = 0; i < n; ++i)
    bits[i] = i < static_cast<int64_t>(special_bits.size())
                  ? special_bits[i]
                  : static_cast<uint32_t>(gen());
  std::vector<float> x(n);
  std::memcpy(x.data(), bits.data(), n * 4);
  rt::DeviceBuffer dx(n * 4), dout(rows * 24 * 4), dback(n * 4),
      dunpacked(n * 4);
  dx.upload(x.data(), n * 4);
  const int64_t xs[2] = {rows, kCols}, os[2] = {rows, 24};
  launch_rows(
      kernel, rows,
      [&](rt::ArgPack &args) {
        ops::push_tensor(args,
                         rt::TensorView::contiguous(dx.ptr(), DType::f32, xs));
        ops::push_tensor(
            args, rt::TensorView::contiguous(dout.ptr(), DType::u32, os));
        ops::push_tensor(
            args, rt::TensorView::contiguous(dback.ptr(), DType::f32, xs));
        ops::push_tensor(
            args, rt::TensorView::contiguous(dunpacked.ptr(), DType::u32, xs));
      },
      /*threads=*/128);
  std::vector<uint32_t> words(rows * 24), unpacked(n);
  std::vector<float> back(n);
  dout.download(words.data(), words.size() * 4);
  dback.download(back.data(), n * 4);
  dunpacked.download(unpacked.data(), n * 4);
  size_t bad = 0;
  for (int64_t g = 0; g < n / 8; ++g) {
    uint16_t codes[8];
    for (int i = 0; i < 8; ++i) {
      codes[i] = ref::f32_to_e5m6(x[8 * g + i]);
      float want = ref::e5m6_to_f32(codes[i]), got = back[8 * g + i];
      bool same =
          std::isnan(want) ? std::isnan(got) : std::memcmp(&want, &got, 4) == 0;
      if (!same && bad++ < 5)
        UNSCOPED_INFO("element " << 8 * g + i << " (bits " << std::hex
                                 << bits[8 * g + i] << "): decoded " << got
                                 << ", want " << want << std::dec);
      if (unpacked[8 * g + i] != codes[i] && bad++ < 5)
        UNSCOPED_INFO("element " << 8 * g + i << ": unpacked code " << std::hex
                                 << unpacked[8 * g + i] << ", want " << codes[i]
                                 << std::dec);
    }
    uint32_t want[3];
    ref::pack_e5m6(codes, want);
    for (int w = 0; w < 3; ++w)
      if (words[3 * g + w] != want[w] && bad++ < 5)
        UNSCOPED_INFO("group " << g << " word " << w << ": got " << std::hex
                               << words[3 * g + w] << ", want " << want[w]
                               << std::dec);
  }
  CHECK(bad == 0);
}
