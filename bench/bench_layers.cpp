// bench_layers.cpp - The modeling layers' times on the GPU (issue 24's
// "layer figures"), each a CUDA graph's replay (rt::time_graph_ms), with
// TileKernels' own times on the H200 (shared/perf/tilekernels_h200.md) where
// measured: mHC's pre step (inference: the norm's partials + big_fuse;
// training: the C++ layer's forward, and forward + backward), one mHC layer
// (pre + post, inference), and the Engram gate layer (forward, forward +
// backward). Figures, never assertions; exit 77 without a GPU.
#include "mhc/mhc_pre_big_fuse.h"
#include "mhc/mhc_pre_norm_fn_partials.h"
#include "mhc/mhc_stream.h"
#include "modeling/engram_gate.h"
#include "modeling/mhc_pre.h"

#include "common/convert.h"

#include "tilejit/error.h"
#include "tilejit/runtime/buffer.h"
#include "tilejit/runtime/driver.h"
#include "tilejit/runtime/timer.h"

#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <random>
#include <vector>

using namespace tilejit;

namespace {

/// Device tensors of random normal values (bf16 or f32), or zeros.
struct Pool {
  std::vector<std::unique_ptr<rt::DeviceBuffer>> buffers;
  std::mt19937_64 gen{1};
  rt::TensorView make(DType dtype, std::vector<int64_t> shape, float scale,
                      float shift = 0, bool zero = false) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    const size_t bytes = static_cast<size_t>(n) * size_of(dtype);
    std::vector<uint8_t> host(bytes, 0);
    std::normal_distribution<float> dist;
    if (!zero)
      for (int64_t i = 0; i < n; ++i) {
        const float v = dist(gen) * scale + shift;
        if (dtype == DType::bf16)
          reinterpret_cast<uint16_t *>(host.data())[i] = ref::f32_to_bf16(v);
        else
          reinterpret_cast<float *>(host.data())[i] = v;
      }
    buffers.push_back(std::make_unique<rt::DeviceBuffer>(bytes));
    if (bytes)
      buffers.back()->upload(host.data(), bytes);
    return rt::TensorView::contiguous(buffers.back()->ptr(), dtype, shape);
  }
  rt::TensorView zeros(DType dtype, std::vector<int64_t> shape) {
    return make(dtype, std::move(shape), 0, 0, true);
  }
};

void row(const char *what, const std::string &shape, double us,
         double peer_us) {
  std::printf("| %s | %s | %.2f | %s | %s |\n", what, shape.c_str(), us,
              peer_us > 0 ? fmt::format("{:.2f}", peer_us).c_str() : "-",
              peer_us > 0 ? fmt::format("{:.2f}x", peer_us / us).c_str() : "-");
}

double us_of(const std::function<void(CUstream)> &fn) {
  return 1e3 * rt::time_graph_ms([&](CUstream s, int) { fn(s); }, 3, 5);
}

void mhc_layers(Pool &p) {
  const int64_t T = 8192, mhc = 4, H = 4096, M3 = 24, Kd = mhc * H, S = 16;
  const std::string shape = "n1=8192,mhc=4,h=4096";
  const auto f32 = DType::f32, bf16 = DType::bf16;
  const rt::TensorView residual = p.make(bf16, {T, mhc, H}, 1),
                       fn = p.make(f32, {M3, Kd}, 1e-4f),
                       scale = p.make(f32, {3}, 0.1f),
                       base = p.make(f32, {M3}, 0.1f);
  const rt::TensorView layer_input = p.zeros(bf16, {T, H}),
                       post = p.zeros(f32, {T, mhc, 1}),
                       comb = p.zeros(f32, {T, mhc, mhc});
  const modeling::MhcPreSaved saved{ops::absent(),
                                    p.zeros(f32, {S, T, M3}),
                                    p.zeros(f32, {S, T}),
                                    p.zeros(f32, {T, M3}),
                                    p.zeros(f32, {T}),
                                    p.zeros(f32, {T, M3}),
                                    p.zeros(f32, {T, mhc, 1}),
                                    p.zeros(f32, {T, mhc, mhc})};
  // Inference: the partials, then big_fuse (post and comb as (T, mhc),
  // (T, mhc^2) views of the same memory).
  const rt::TensorView post2 =
                           rt::TensorView::contiguous(post.data, f32, {T, mhc}),
                       comb2 = rt::TensorView::contiguous(comb.data, f32,
                                                          {T, mhc * mhc});
  auto infer = [&](CUstream s) {
    const ops::OpDef &partials = mhc::mhc_pre_norm_fn_partials_op();
    const std::vector<ops::ParamValue> params = partials.with_defaults({S});
    const rt::TensorView tensors[] = {residual, fn, saved.mul_splits,
                                      saved.sq_splits};
    partials.call(tensors, params, s);
    mhc::mhc_pre_big_fuse_fwd_op().call(
        {saved.mul_splits, saved.sq_splits, scale, base, residual, post2, comb2,
         layer_input},
        {1e-6, 1e-6, 1e-6, 1.0, int64_t{10}, S}, s);
  };
  row("mhc_pre fwd (no_grad: partials + big_fuse)", shape, us_of(infer),
      214.70);
  const rt::TensorView y = p.make(bf16, {T, H}, 1),
                       next = p.zeros(bf16, {T, mhc, H});
  row("mhc_layer pre+post fwd (no_grad)", shape, us_of([&](CUstream s) {
        infer(s);
        mhc::mhc_post_fwd_op().call({y, residual, post, comb, next}, {}, s);
      }),
      359.56);
  auto forward = [&](CUstream s) {
    modeling::mhc_pre_forward(residual, fn, scale, base, ops::absent(),
                              layer_input, post, comb, saved, {}, s);
  };
  row("mhc_pre (train) fwd", shape, us_of(forward), 233.04);
  const rt::TensorView li_grad = p.make(bf16, {T, H}, 1),
                       post_grad = p.make(f32, {T, mhc, 1}, 1),
                       comb_grad = p.make(f32, {T, mhc, mhc}, 1),
                       residual_grad = p.make(bf16, {T, mhc, H}, 1),
                       fn_grad = p.zeros(f32, {M3, Kd}),
                       scale_grad = p.zeros(f32, {3}),
                       base_grad = p.zeros(f32, {M3});
  const modeling::MhcPreBackwardScratch scratch{
      p.zeros(f32, {T, mhc, 1}), p.zeros(f32, {T, mhc, mhc}),
      p.zeros(f32, {T, M3}),     p.zeros(f32, {T, M3}),
      p.zeros(f32, {T}),         ops::absent()};
  row("mhc_pre (train) fwd+bwd", shape, us_of([&](CUstream s) {
        forward(s);
        modeling::mhc_pre_backward(residual, fn, scale, base, ops::absent(),
                                   post, saved, li_grad, post_grad, comb_grad,
                                   residual_grad, fn_grad, ops::absent(),
                                   scale_grad, base_grad, scratch, {}, s);
      }),
      1346.35);
}

void engram_layer(Pool &p) {
  const int64_t T = 8001, hc = 4, D = 7168, B = 132;
  const std::string shape = "nt=8001,hc=4,h=7168";
  const auto f32 = DType::f32, bf16 = DType::bf16;
  const rt::TensorView x = p.make(bf16, {T, hc, D}, 1),
                       k = p.make(bf16, {T, hc, D}, 1),
                       v = p.make(bf16, {T, D}, 1),
                       wh = p.make(bf16, {hc, D}, 1),
                       we = p.make(bf16, {hc, D}, 1),
                       out = p.zeros(bf16, {T, hc, D});
  const modeling::EngramGateSavedViews saved{
      p.zeros(f32, {hc, D}), p.zeros(f32, {T, hc}), p.zeros(f32, {T, hc}),
      p.zeros(f32, {T, hc}), p.zeros(f32, {T, hc})};
  auto forward = [&](CUstream s) {
    modeling::engram_gate_forward(x, k, v, wh, we, out, saved, 1e-6f, 1e-20f,
                                  s);
  };
  // TileKernels' ops' sum (its layer was not measured): fused_weight +
  // engram_gate_fwd (save), then + engram_gate_bwd + grad_w_reduce.
  row("engram_gate layer fwd", shape, us_of(forward), 3.16 + 390.10);
  const rt::TensorView grad_out = p.make(bf16, {T, hc, D}, 1),
                       gx = p.zeros(bf16, {T, hc, D}),
                       gk = p.zeros(bf16, {T, hc, D}),
                       gv = p.zeros(bf16, {T, D}),
                       partial = p.zeros(f32, {B, hc, D}),
                       gwh = p.zeros(f32, {hc, D}), gwe = p.zeros(f32, {hc, D});
  row("engram_gate layer fwd+bwd", shape, us_of([&](CUstream s) {
        forward(s);
        modeling::engram_gate_backward(grad_out, x, k, v, wh, we, saved, gx, gk,
                                       gv, partial, gwh, gwe, 1e-6f, s);
      }),
      3.16 + 390.10 + 880.94 + 6.21);
}

} // namespace

int main() {
  if (!rt::try_driver()) {
    std::printf("no CUDA driver: layer benchmarks skipped (%s)\n",
                rt::no_driver_reason().c_str());
    return 77;
  }
  try {
    std::printf("| layer | shape | tilejit us | TileKernels us | speed-up |\n"
                "|---|---|---|---|---|\n");
    Pool pool;
    mhc_layers(pool);
    engram_layer(pool);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tilejit_bench_layers: %s\n", e.what());
    return 1;
  }
  return 0;
}
