// bench_tma_transpose.cpp - batched_transpose's kernel with its tiles
// through a TMA pipeline (BatchedTransposeSpec::tma_stages: tiles of 64 x
// 64, 64 x 128 and 128 x 64, 2 to 4 stages, 2 to 16 tiles a block, 128 or
// 256 threads) against the op as it is called
// (tiles loaded into registers), at TileKernels' shapes, in one process:
// each variant's output compared with the op's byte for byte, times against
// a device copy of the same bytes. What decides whether the op takes the
// pipeline.
#include "bench_tma_transpose.h"

#include "common/jit.h"
#include "op/typed_op.h"
#include "run.h"
#include "transpose/batched_transpose.h"

#include "tilejit/runtime/buffer.h"
#include "tilejit/runtime/stream.h"
#include "tilejit/runtime/timer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

using namespace tilejit;

namespace {

struct Shape {
  int64_t b, x, y;
  DType dtype;
};

struct Variant {
  int block_x, block_y, stages, tiles, threads;
};

/// 64 x 64 tiles at 2-4 stages, 4-16 tiles a block, 128 and 256 threads;
/// 64 x 128 and 128 x 64 tiles at 3-4 stages, 2-8 tiles, 256 threads.
std::vector<Variant> variants() {
  std::vector<Variant> out;
  for (int threads : {128, 256})
    for (int tiles : {4, 8, 16})
      for (int stages : {2, 3, 4})
        out.push_back({64, 64, stages, tiles, threads});
  for (auto [bx, by] : {std::pair{64, 128}, {128, 64}})
    for (int tiles : {2, 4, 8})
      for (int stages : {3, 4})
        out.push_back({bx, by, stages, tiles, 256});
  return out;
}

/// The faster of two timings of `fn` (5 warm-up calls, 20 timed).
template <class Fn> double best_ms(Fn &&fn) {
  double ms = 1e30;
  for (int round = 0; round < 2; ++round)
    ms = std::min(ms, rt::time_ms(fn, nullptr, 5, 20));
  return ms;
}

} // namespace

bool bench_tma_transpose() {
  fmt::print("\nbatched_transpose through a TMA pipeline (stages, tiles a "
             "block, threads) against the op's kernel (tiles in "
             "registers):\n{:>16} {:>6} {:>24} {:>10} {:>9} {:>8} {:>8}  {}\n",
             "B x X x Y", "dtype", "kernel", "us", "GB/s", "% copy", "% op",
             "check");
  bool all_passed = true;
  const Shape shapes[] = {{32, 4096, 4096, DType::bf16},
                          {8, 4032, 7168, DType::bf16},
                          {8, 4032, 7168, DType::e4m3}};
  for (const Shape &s : shapes) {
    const int64_t numel = s.b * s.x * s.y;
    const size_t bytes = static_cast<size_t>(numel) * size_of(s.dtype);
    std::vector<uint8_t> host(bytes), want(bytes), got(bytes);
    std::mt19937_64 gen(5);
    for (size_t i = 0; i < bytes; i += 8) {
      const uint64_t v = gen();
      std::memcpy(&host[i], &v, std::min<size_t>(8, bytes - i));
    }
    rt::DeviceBuffer dx(bytes), dout(bytes);
    dx.upload(host.data(), bytes);
    const int64_t x_shape[3] = {s.b, s.x, s.y}, out_shape[3] = {s.b, s.y, s.x};
    const rt::TensorView vx =
        rt::TensorView::contiguous(dx.ptr(), s.dtype, x_shape);
    const rt::TensorView vout =
        rt::TensorView::contiguous(dout.ptr(), s.dtype, out_shape);
    harness::RunOptions options;
    options.iters = 20;
    const double copy_ms = harness::copy_roofline_ms(2.0 * bytes, options);
    auto row = [&](const std::string &kernel, double ms, double op_ms,
                   const std::string &check) {
      fmt::print("{:>16} {:>6} {:>24} {:>10.1f} {:>9.0f} {:>7.1f}% {:>7.1f}%  "
                 "{}\n",
                 fmt::format("{}x{}x{}", s.b, s.x, s.y), name_of(s.dtype),
                 kernel, ms * 1e3, 2.0 * bytes / (ms * 1e6), 100 * copy_ms / ms,
                 100 * op_ms / ms, check);
      std::fflush(stdout);
    };
    transpose::batched_transpose(vx, vout);
    rt::synchronize(nullptr);
    dout.download(want.data(), bytes);
    const double op_ms =
        best_ms([&] { transpose::batched_transpose(vx, vout); });
    row("op (registers)", op_ms, op_ms, "reference");
    for (const Variant &v : variants()) {
      if (s.x % v.block_x != 0 || s.y % (v.block_y * v.tiles) != 0)
        continue;
      const transpose::BatchedTransposeSpec spec =
          transpose::batched_transpose_tma_spec(
              s.dtype, v.stages, v.tiles, v.threads, v.block_x, v.block_y);
      const ops::LoadedKernel &kernel =
          ops::load_kernel(ops::spec_key("bench_transpose_tma", spec), [&] {
            return transpose::batched_transpose_kernel(spec);
          });
      ops::KernelArgs args;
      args.tensor("x", vx);
      args.tensor("out", vout);
      auto launch = [&] {
        ops::launch_kernel(kernel, args, "bench_transpose_tma", nullptr);
      };
      dout.upload(host.data(), bytes); // not the op's output any more
      launch();
      rt::synchronize(nullptr);
      dout.download(got.data(), bytes);
      const bool same = got == want;
      all_passed &= same;
      row(fmt::format("{}x{} {}st {}tiles {}t", v.block_x, v.block_y, v.stages,
                      v.tiles, v.threads),
          best_ms(launch), op_ms, same ? "same bytes" : "DIFFERS");
    }
  }
  return all_passed;
}
