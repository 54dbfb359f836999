// gemm_epilogue_gpu_test.cpp - a TMA + WGMMA gemm with the author's
// epilogue written as ordinary tile ops after the pipelined loop:
// out = bf16(alpha * scale[r] * (a . b^T)[r, c] + bias[c]), with a row
// vector, a column vector and a scalar, at tiles inside and across the
// edges of C, against the same on the CPU. Small integers and powers of two
// keep every f32 step exact, so the bf16 results must match bit for bit.
#include "common/jit.h"
#include "op/typed_op.h"

#include "common/convert.h"
#include "tilejit/compiler/dsl.h"
#include "tilejit/runtime/buffer.h"
#include "tilejit/runtime/stream.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace tilejit;

namespace {

constexpr int64_t kBlockN = 128;

/// `c_align`: 16 stores c through TMA, 4 with st.global.
Kernel fused_gemm_kernel(int c_align) {
  constexpr int64_t bm = 128, bk = 64, bn = kBlockN;
  dsl::KernelBuilder k("fused_gemm", 384);
  auto a = k.tensor("a", DType::bf16, 2, dsl::inner_contiguous(16));
  auto b = k.tensor("b", DType::bf16, 2, dsl::inner_contiguous(16));
  auto c = k.tensor("c", DType::bf16, 2, dsl::inner_contiguous(c_align));
  auto scale = k.tensor("scale", DType::f32, 2); // (M, 1)
  auto bias = k.tensor("bias", DType::f32, 2);   // (1, N)
  auto alpha = k.scalar("alpha", DType::f32);
  k.grid({k.blocks(a, 0, bm), k.blocks(b, 0, bn)});
  auto m0 = k.block_id(0) * k.index(bm), n0 = k.block_id(1) * k.index(bn);
  auto zero = k.index(0);
  auto sa = k.alloc_shared(DType::bf16, {bm, bk});
  auto sb = k.alloc_shared(DType::bf16, {bn, bk});
  auto steps = (k.dim(a, 1) + k.index(bk - 1)) / k.index(bk);
  auto acc = k.pipelined(steps, 4, {k.full({bm, bn}, 0.0, DType::f32)},
                         [&](dsl::Value step, std::vector<dsl::Value> carried) {
                           k.copy(a, {m0, step * k.index(bk)}, sa);
                           k.copy(b, {n0, step * k.index(bk)}, sb);
                           return std::vector{k.gemm(sa, sb, carried[0])};
                         })[0];
  auto rows = k.broadcast(k.load(scale, {m0, zero}, {bm, 1}), {bm, bn});
  auto cols = k.broadcast(k.load(bias, {zero, n0}, {1, bn}), {bm, bn});
  k.store(k.cast(acc * rows * alpha + cols, DType::bf16), c, {m0, n0});
  return k.build();
}

std::vector<uint16_t> bf16_of(const std::vector<float> &v) {
  std::vector<uint16_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    out[i] = ref::f32_to_bf16(v[i]);
  return out;
}

void run(int64_t m, int64_t n, int64_t kd, int c_align) {
  const ops::LoadedKernel &kernel = ops::load_kernel(
      ops::make_key(c_align == 16 ? "test_fused_gemm_tma" : "test_fused_gemm"),
      [&] { return fused_gemm_kernel(c_align); });
  REQUIRE((kernel.abi.args[2].kind == AbiArg::Kind::tensor_map) ==
          (c_align == 16));
  std::mt19937_64 gen(Catch::rngSeed());
  std::uniform_int_distribution<int> small(-4, 4), power(-2, 2);
  std::vector<float> a(m * kd), b(n * kd), scale(m), bias(n);
  for (float &x : a)
    x = static_cast<float>(small(gen));
  for (float &x : b)
    x = static_cast<float>(small(gen));
  for (float &x : scale)
    x = std::ldexp(1.0f, power(gen));
  for (float &x : bias)
    x = static_cast<float>(small(gen));
  const float alpha = 0.25f;
  const std::vector<uint16_t> ra = bf16_of(a), rb = bf16_of(b);
  rt::DeviceBuffer da(ra.size() * 2), db(rb.size() * 2), ds(m * 4),
      dbias(n * 4), dc(m * n * 2);
  da.upload(ra.data(), ra.size() * 2);
  db.upload(rb.data(), rb.size() * 2);
  ds.upload(scale.data(), m * 4);
  dbias.upload(bias.data(), n * 4);
  const int64_t a_shape[2] = {m, kd}, b_shape[2] = {n, kd}, c_shape[2] = {m, n},
                s_shape[2] = {m, 1}, bias_shape[2] = {1, n};
  const rt::TensorView
      va = rt::TensorView::contiguous(da.ptr(), DType::bf16, a_shape),
      vb = rt::TensorView::contiguous(db.ptr(), DType::bf16, b_shape),
      vc = rt::TensorView::contiguous(dc.ptr(), DType::bf16, c_shape),
      vs = rt::TensorView::contiguous(ds.ptr(), DType::f32, s_shape),
      vbias = rt::TensorView::contiguous(dbias.ptr(), DType::f32, bias_shape);
  ops::KernelArgs args;
  args.tensor("a", va);
  args.tensor("b", vb);
  args.tensor("c", vc);
  args.tensor("scale", vs);
  args.tensor("bias", vbias);
  args.scalar("alpha", alpha);
  ops::launch_kernel(kernel, args, "fused_gemm", nullptr);
  rt::synchronize(nullptr);
  std::vector<uint16_t> out(m * n);
  dc.download(out.data(), out.size() * 2);
  size_t bad = 0;
  for (int64_t r = 0; r < m; ++r)
    for (int64_t j = 0; j < n; ++j) {
      float dot = 0;
      for (int64_t kk = 0; kk < kd; ++kk)
        dot += a[r * kd + kk] * b[j * kd + kk];
      const uint16_t want = ref::f32_to_bf16(dot * scale[r] * alpha + bias[j]);
      if (out[r * n + j] != want && bad++ < 5)
        UNSCOPED_INFO(m << "x" << n << "x" << kd << " [" << r << ", " << j
                        << "]: " << out[r * n + j] << ", want " << want);
    }
  CHECK(bad == 0);
}

} // namespace

TEST_CASE("a gemm's epilogue of tile ops runs in the WGMMA kernel",
          "[gemm][epilogue]") {
  for (int c_align : {4, 16}) { // st.global, TMA
    INFO("c aligned to " << c_align << " bytes");
    run(256, 256, 256, c_align);  // whole tiles
    run(300, 200, 320, c_align);  // M and N end inside a tile
    run(128, 136, 1024, c_align); // one row of tiles, a narrow last column
  }
}
