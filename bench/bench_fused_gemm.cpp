// bench_fused_gemm.cpp - The gemm with an epilogue of tile ops against the
// plain gemm: c = bf16(alpha * scale[r] * (a . b^T)[r, c] + bias[c]) (a row
// vector, a column vector and a scalar, in the WGMMA kernel) and c =
// bf16(a . b^T), the same kernel otherwise (gemm_kernel with and without an
// epilogue), at TileKernels-sized bf16 shapes. Small integers and powers of
// two keep every f32 step exact, so sampled elements are checked bit for bit.
#include "bench_fused_gemm.h"

#include "common/convert.h"
#include "common/jit.h"
#include "gemm/gemm.h"
#include "op/typed_op.h"

#include "tilejit/runtime/buffer.h"
#include "tilejit/runtime/stream.h"
#include "tilejit/runtime/timer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

using namespace tilejit;

namespace {

constexpr float kAlpha = 0.25f;

dsl::Value scale_bias(dsl::KernelBuilder &k, dsl::Value acc, dsl::Value m0,
                      dsl::Value n0) {
  auto scale = k.tensor("scale", DType::f32, 2); // (M, 1)
  auto bias = k.tensor("bias", DType::f32, 2);   // (1, N)
  auto alpha = k.scalar("alpha", DType::f32);
  const std::vector<int64_t> shape = acc.shape();
  auto zero = k.index(0);
  auto rows = k.broadcast(k.load(scale, {m0, zero}, {shape[0], 1}), shape);
  auto cols = k.broadcast(k.load(bias, {zero, n0}, {1, shape[1]}), shape);
  return k.cast(acc * rows * alpha + cols, DType::bf16);
}

struct Problem {
  int64_t m, n, kd;
  std::vector<float> a, b, scale, bias;
  rt::DeviceBuffer da, db, ds, dbias, dc;
  rt::TensorView va, vb, vc, vs, vbias;

  Problem(int64_t m_, int64_t n_, int64_t k_)
      : m(m_), n(n_), kd(k_), a(m * kd), b(n * kd), scale(m), bias(n),
        da(m * kd * 2), db(n * kd * 2), ds(m * 4), dbias(n * 4), dc(m * n * 2) {
    std::mt19937_64 gen(7);
    std::uniform_int_distribution<int> small(-4, 4), power(-2, 2);
    for (auto *v : {&a, &b, &bias})
      for (float &x : *v)
        x = static_cast<float>(small(gen));
    for (float &x : scale)
      x = std::ldexp(1.0f, power(gen));
    upload_bf16(da, a);
    upload_bf16(db, b);
    ds.upload(scale.data(), m * 4);
    dbias.upload(bias.data(), n * 4);
    const int64_t a_shape[2] = {m, kd}, b_shape[2] = {n, kd},
                  c_shape[2] = {m, n}, s_shape[2] = {m, 1},
                  bias_shape[2] = {1, n};
    va = rt::TensorView::contiguous(da.ptr(), DType::bf16, a_shape);
    vb = rt::TensorView::contiguous(db.ptr(), DType::bf16, b_shape);
    vc = rt::TensorView::contiguous(dc.ptr(), DType::bf16, c_shape);
    vs = rt::TensorView::contiguous(ds.ptr(), DType::f32, s_shape);
    vbias = rt::TensorView::contiguous(dbias.ptr(), DType::f32, bias_shape);
  }

  static void upload_bf16(rt::DeviceBuffer &to, const std::vector<float> &v) {
    std::vector<uint16_t> raw(v.size());
    std::transform(v.begin(), v.end(), raw.begin(), ref::f32_to_bf16);
    to.upload(raw.data(), raw.size() * 2);
  }

  /// Elements of c that differ from the CPU at 256 sampled positions.
  size_t sampled_mismatches(bool fused) const {
    std::vector<uint16_t> out(m * n);
    dc.download(out.data(), out.size() * 2);
    std::mt19937_64 gen(11);
    size_t bad = 0;
    for (int i = 0; i < 256; ++i) {
      const int64_t r = gen() % m, j = gen() % n;
      float dot = 0;
      for (int64_t kk = 0; kk < kd; ++kk)
        dot += a[r * kd + kk] * b[j * kd + kk];
      const float want = fused ? dot * scale[r] * kAlpha + bias[j] : dot;
      bad += out[r * n + j] != ref::f32_to_bf16(want);
    }
    return bad;
  }
};

} // namespace

bool bench_fused_gemm() {
  gemm::GemmSpec spec;
  spec.full_tiles = 1;
  spec.aligned_c = 1; // the benchmark's c is contiguous: TMA stores
  const ops::LoadedKernel &plain =
      ops::load_kernel(ops::spec_key("bench_gemm_plain", spec),
                       [&] { return gemm::gemm_kernel(spec, nullptr); });
  const ops::LoadedKernel &fused =
      ops::load_kernel(ops::spec_key("bench_gemm_scale_bias", spec),
                       [&] { return gemm::gemm_kernel(spec, scale_bias); });
  fmt::print("\ngemm with a fused epilogue, bf16(alpha * scale[r] * a.b^T + "
             "bias[c]), against the same kernel storing bf16(a.b^T):\n"
             "{:>20} {:>10} {:>10} {:>10} {:>10} {:>9}  {}\n",
             "m x n x k", "plain ms", "TFLOP/s", "fused ms", "TFLOP/s",
             "fused %", "check");
  bool all_passed = true;
  const int64_t shapes[][3] = {
      {8192, 8192, 8192}, {4096, 4096, 4096}, {8192, 7168, 2048}};
  for (const auto &[m, n, kd] : shapes) {
    Problem p(m, n, kd);
    ops::KernelArgs plain_args, fused_args;
    for (ops::KernelArgs *args : {&plain_args, &fused_args}) {
      args->tensor("a", p.va);
      args->tensor("b", p.vb);
      args->tensor("c", p.vc);
    }
    fused_args.tensor("scale", p.vs);
    fused_args.tensor("bias", p.vbias);
    fused_args.scalar("alpha", kAlpha);
    auto time = [&](const ops::LoadedKernel &kernel,
                    const ops::KernelArgs &args) {
      return rt::time_ms(
          [&] { ops::launch_kernel(kernel, args, "bench_gemm", nullptr); },
          nullptr, 5, 30);
    };
    // Alternate, twice, and keep each kernel's better time.
    double plain_ms = 1e30, fused_ms = 1e30;
    size_t bad = 0;
    for (int round = 0; round < 2; ++round) {
      plain_ms = std::min(plain_ms, time(plain, plain_args));
      bad += p.sampled_mismatches(false);
      fused_ms = std::min(fused_ms, time(fused, fused_args));
      bad += p.sampled_mismatches(true);
    }
    const double flops = 2.0 * m * n * kd;
    fmt::print("{:>20} {:>10.4f} {:>10.1f} {:>10.4f} {:>10.1f} {:>8.1f}%  {}\n",
               fmt::format("{}x{}x{}", m, n, kd), plain_ms,
               flops / (plain_ms * 1e9), fused_ms, flops / (fused_ms * 1e9),
               100 * plain_ms / fused_ms,
               bad == 0 ? "ok" : fmt::format("FAILED ({} of 1024)", bad));
    std::fflush(stdout);
    all_passed &= bad == 0;
  }
  return all_passed;
}
