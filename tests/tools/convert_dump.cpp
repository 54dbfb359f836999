// convert_dump.cpp - Writes the reference conversions of kernels/common/
// convert.h as raw binary files, for tests/python/test_convert.py to compare
// with numpy and ml_dtypes.
//
//   tilejit_convert_dump INPUT OUTDIR
//
// INPUT holds float32 values (raw, native byte order: little-endian on every
// machine we build for). For each value, OUTDIR receives one element of
//   enc_bf16.u16  enc_f16.u16  enc_f16_rz.u16  enc_e5m6.u16
//   enc_e4m3.u8   enc_e5m2.u8 (saturate=false)  enc_e5m2_sat.u8
//   enc_e2m1.u8   (the code in the low nibble)
// and, independent of the input, the float32 decodes of every code:
//   dec_bf16.f32, dec_f16.f32 (65536 each), dec_e5m6.f32 (4096),
//   dec_e4m3.f32, dec_e5m2.f32, dec_ue8m0.f32 (256 each), dec_e2m1.f32 (16).
// Exit status 0 on success, 1 on a usage or I/O error.
#include "common/convert.h"

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

using namespace tilejit::ref;

namespace {

template <class T>
bool write_file(const std::string &dir, const char *name,
                const std::vector<T> &data) {
  std::string path = dir + "/" + name;
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char *>(data.data()),
            static_cast<std::streamsize>(data.size() * sizeof(T)));
  if (!out) {
    std::fprintf(stderr, "tilejit_convert_dump: cannot write %s\n",
                 path.c_str());
    return false;
  }
  return true;
}

/// decode(code) for every code in [0, count).
template <class Decode>
std::vector<float> decode_all(uint32_t count, Decode decode) {
  std::vector<float> out(count);
  for (uint32_t c = 0; c < count; ++c)
    out[c] = decode(c);
  return out;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: tilejit_convert_dump INPUT OUTDIR\n");
    return 1;
  }
  std::ifstream in(argv[1], std::ios::binary | std::ios::ate);
  if (!in) {
    std::fprintf(stderr, "tilejit_convert_dump: cannot read %s\n", argv[1]);
    return 1;
  }
  const std::streamsize bytes = in.tellg();
  if (bytes % 4 != 0) {
    std::fprintf(stderr,
                 "tilejit_convert_dump: %s has %lld bytes; requires a "
                 "multiple of 4 (float32 values)\n",
                 argv[1], static_cast<long long>(bytes));
    return 1;
  }
  std::vector<float> x(static_cast<size_t>(bytes / 4));
  in.seekg(0);
  in.read(reinterpret_cast<char *>(x.data()), bytes);

  const size_t n = x.size();
  std::vector<uint16_t> bf16(n), f16(n), f16_rz(n), e5m6(n);
  std::vector<uint8_t> e4m3(n), e5m2(n), e5m2_sat(n), e2m1(n);
  for (size_t i = 0; i < n; ++i) {
    bf16[i] = f32_to_bf16(x[i]);
    f16[i] = f32_to_f16(x[i]);
    f16_rz[i] = f32_to_f16_rz(x[i]);
    e5m6[i] = f32_to_e5m6(x[i]);
    e4m3[i] = f32_to_e4m3(x[i]);
    e5m2[i] = f32_to_e5m2(x[i], false);
    e5m2_sat[i] = f32_to_e5m2(x[i], true);
    e2m1[i] = f32_to_e2m1(x[i]);
  }
  auto u16 = [](uint32_t c) { return static_cast<uint16_t>(c); };
  auto u8 = [](uint32_t c) { return static_cast<uint8_t>(c); };
  const std::string dir = argv[2];
  bool ok =
      write_file(dir, "enc_bf16.u16", bf16) &&
      write_file(dir, "enc_f16.u16", f16) &&
      write_file(dir, "enc_f16_rz.u16", f16_rz) &&
      write_file(dir, "enc_e5m6.u16", e5m6) &&
      write_file(dir, "enc_e4m3.u8", e4m3) &&
      write_file(dir, "enc_e5m2.u8", e5m2) &&
      write_file(dir, "enc_e5m2_sat.u8", e5m2_sat) &&
      write_file(dir, "enc_e2m1.u8", e2m1) &&
      write_file(
          dir, "dec_bf16.f32",
          decode_all(65536, [&](uint32_t c) { return bf16_to_f32(u16(c)); })) &&
      write_file(
          dir, "dec_f16.f32",
          decode_all(65536, [&](uint32_t c) { return f16_to_f32(u16(c)); })) &&
      write_file(
          dir, "dec_e5m6.f32",
          decode_all(4096, [&](uint32_t c) { return e5m6_to_f32(u16(c)); })) &&
      write_file(
          dir, "dec_e4m3.f32",
          decode_all(256, [&](uint32_t c) { return e4m3_to_f32(u8(c)); })) &&
      write_file(
          dir, "dec_e5m2.f32",
          decode_all(256, [&](uint32_t c) { return e5m2_to_f32(u8(c)); })) &&
      write_file(
          dir, "dec_ue8m0.f32",
          decode_all(256, [&](uint32_t c) { return ue8m0_to_f32(u8(c)); })) &&
      write_file(dir, "dec_e2m1.f32", decode_all(16, [&](uint32_t c) {
                   return e2m1_to_f32(u8(c));
                 }));
  return ok ? 0 : 1;
}
