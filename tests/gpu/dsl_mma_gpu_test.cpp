// dsl_mma_gpu_test.cpp - k.gemm outside a pipelined loop (warp-level
// mma.sync) on the GPU: bf16, f16 and tf32 operands from shared tiles (and
// a bf16 tile with an f32 one, f32 rounded to tf32 or not), the
// accumulator from global memory or zeros, carried through a loop over K.
#include "dsl_gpu.h"

#include "common/abi.h"
#include "common/convert.h"
#include "common/jit.h"
#include "mhc/mhc_common.h"

#include "tilejit/compiler/dsl.h"
#include "tilejit/runtime/buffer.h"
#include "tilejit/runtime/launch.h"
#include "tilejit/runtime/stream.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace tilejit;
using namespace tilejit::dsl_gpu;

namespace {

struct MmaCase {
  DType dtype;
  int64_t m, n, k, chunk; // block tile m x n, K in chunks
  unsigned threads;
  bool from_c;                  // accumulator starts at c (else at zero)
  std::optional<DType> b_dtype; // b's, when not a's
  dsl::Tf32 tf32 = dsl::Tf32::truncated;

  DType b() const { return b_dtype.value_or(dtype); }
  bool is_tf32() const { return dtype == DType::f32 || b() == DType::f32; }
};

std::string name(const MmaCase &c) {
  return "test_mma_" + std::string(name_of(c.dtype)) + "_" +
         std::string(name_of(c.b())) + "_" + std::to_string(c.m) + "x" +
         std::to_string(c.n) + "x" + std::to_string(c.k) + "_" +
         std::to_string(c.chunk) + "_" + std::to_string(c.threads) +
         (c.from_c ? "_c" : "_0") +
         (c.tf32 == dsl::Tf32::rounded ? "_rounded" : "");
}

/// out[r, :] = (c[r, :] or 0) + sum over K of a[r, k] * b[:, k], a block per
/// m rows of a (rows, K), b (n, K): each K chunk goes through shared tiles.
Kernel mma_kernel(const MmaCase &c) {
  dsl::KernelBuilder k("mma", static_cast<int>(c.threads));
  auto a = k.tensor("a", c.dtype, 2);
  auto b = k.tensor("b", c.b(), 2);
  auto cin = k.tensor("c", DType::f32, 2);
  auto out = k.tensor("out", DType::f32, 2);
  auto row = k.block_id(0) * k.index(c.m);
  auto sa = k.alloc_shared(c.dtype, {c.m, c.chunk});
  auto sb = k.alloc_shared(c.b(), {c.n, c.chunk});
  auto init = c.from_c ? k.load(cin, {row, k.index(0)}, {c.m, c.n})
                       : k.full({c.m, c.n}, 0.0, DType::f32);
  auto acc = k.serial(k.index(0), k.index(c.k / c.chunk), {init},
                      [&](dsl::Value step, std::vector<dsl::Value> carried) {
                        auto k0 = step * k.index(c.chunk);
                        k.barrier(); // the last step's gemm has read them
                        k.store(k.load(a, {row, k0}, {c.m, c.chunk}), sa,
                                {k.index(0), k.index(0)});
                        k.store(k.load(b, {k.index(0), k0}, {c.n, c.chunk}), sb,
                                {k.index(0), k.index(0)});
                        k.barrier();
                        return std::vector{k.gemm(sa, sb, carried[0], c.tf32)};
                      })[0];
  k.store(acc, out, {row, k.index(0)});
  return k.build();
}

void run(const MmaCase &c, int64_t rows) {
  const ops::LoadedKernel &kernel =
      ops::load_kernel(ops::make_key(name(c)), [&] { return mma_kernel(c); });
  const bool tf32 = c.is_tf32();
  std::vector<float> a = test_values(rows * c.k, !tf32, 1),
                     b = test_values(c.n * c.k, !tf32, 2),
                     cin = test_values(rows * c.n, true, 3);
  // The operands as stored (16-bit values rounded) and as multiplied.
  auto encode = [&](std::vector<float> &v, DType dtype) {
    const int64_t bytes = static_cast<int64_t>(size_of(dtype));
    std::vector<uint8_t> raw(v.size() * bytes);
    for (size_t i = 0; i < v.size(); ++i) {
      if (dtype == DType::f32) {
        std::memcpy(&raw[i * 4], &v[i], 4);
        v[i] = c.tf32 == dsl::Tf32::rounded ? mhc::detail::round_to_tf32(v[i])
                                            : v[i];
        continue;
      }
      const uint16_t h =
          dtype == DType::bf16 ? ref::f32_to_bf16(v[i]) : ref::f32_to_f16(v[i]);
      std::memcpy(&raw[i * 2], &h, 2);
      v[i] = dtype == DType::bf16 ? ref::bf16_to_f32(h) : ref::f16_to_f32(h);
    }
    return raw;
  };
  std::vector<uint8_t> ra = encode(a, c.dtype), rb = encode(b, c.b());
  rt::DeviceBuffer da(ra.size()), db(rb.size()), dc(cin.size() * 4),
      dout(rows * c.n * 4);
  da.upload(ra.data(), ra.size());
  db.upload(rb.data(), rb.size());
  dc.upload(cin.data(), cin.size() * 4);
  const int64_t a_shape[2] = {rows, c.k}, b_shape[2] = {c.n, c.k},
                c_shape[2] = {rows, c.n};
  launch_rows(
      kernel, rows,
      [&](rt::ArgPack &args) {
        ops::push_tensor(
            args, rt::TensorView::contiguous(da.ptr(), c.dtype, a_shape));
        ops::push_tensor(args,
                         rt::TensorView::contiguous(db.ptr(), c.b(), b_shape));
        ops::push_tensor(
            args, rt::TensorView::contiguous(dc.ptr(), DType::f32, c_shape));
        ops::push_tensor(
            args, rt::TensorView::contiguous(dout.ptr(), DType::f32, c_shape));
      },
      c.threads, c.m);
  std::vector<float> out(rows * c.n);
  dout.download(out.data(), out.size() * 4);

  size_t bad = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < c.n; ++j) {
      Tf32Dot want = tf32_dot(&a[r * c.k], &b[j * c.k], c.k);
      want.sum += c.from_c ? cin[r * c.n + j] : 0.0;
      const float got = out[r * c.n + j];
      if (!want.matches(got, tf32) && bad++ < 5)
        UNSCOPED_INFO(name(c) << " row " << r << " col " << j << ": " << got
                              << ", want " << want.sum);
    }
  CHECK(bad == 0);
}

} // namespace

TEST_CASE("gemm outside a pipelined loop runs on mma.sync", "[dsl][mma]") {
  // 70 rows: the last block's rows 6.. read zeros and store nothing.
  SECTION("bf16, 4 warps over 2 x 4 tiles, from c") {
    run({DType::bf16, 32, 32, 256, 64, 128, true}, 70);
  }
  SECTION("f16, from zero") {
    run({DType::f16, 32, 32, 128, 64, 128, false}, 70);
  }
  SECTION("tf32 (f32 operands), the norm_fn tile") {
    run({DType::f32, 32, 32, 256, 32, 128, true}, 70);
  }
  SECTION("3 tiles for 4 warps: one warp idle, from zero and from c") {
    run({DType::bf16, 16, 24, 128, 64, 128, false}, 37);
    run({DType::bf16, 16, 24, 128, 64, 128, true}, 37);
  }
  SECTION("8 warps, 64 x 64: 2 x 2 tiles a warp") {
    run({DType::bf16, 64, 64, 64, 64, 256, true}, 130);
  }
  SECTION("a bf16 tile with an f32 one (tf32), f32 rounded or truncated") {
    run({DType::bf16, 32, 32, 256, 128, 128, false, DType::f32,
         dsl::Tf32::rounded},
        70);
    run({DType::bf16, 32, 32, 256, 64, 128, true, DType::f32}, 70);
    run({DType::f32, 32, 16, 128, 32, 128, true, DType::f16,
         dsl::Tf32::rounded},
        45);
  }
  SECTION("f32 rounded to tf32") {
    run({DType::f32, 32, 32, 256, 32, 128, true, {}, dsl::Tf32::rounded}, 70);
  }
}
