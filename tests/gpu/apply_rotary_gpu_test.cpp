// apply_rotary_gpu_test.cpp - apply_rotary's C++ entry on the GPU: query
// and key rotated in place (out is x, which the case table never does), bit
// for bit against the CPU reference, with positions and GPT-J pairs.
#include "transform/apply_rotary.h"
#include "transform/reference.h"

#include "host_random.h"

#include "common/host_tensor.h"

#include "tilejit/runtime/buffer.h"
#include "tilejit/runtime/stream.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <random>

using namespace tilejit;
using ref::HostTensor;

namespace {

size_t bytes(const HostTensor &t) {
  return static_cast<size_t>(t.numel()) * size_of(t.dtype());
}

} // namespace

TEST_CASE("apply_rotary rotates query and key in place on the GPU, bit for "
          "bit as the reference",
          "[transform]") {
  const int64_t T = 333, L = 1024;
  const bool interleaved = GENERATE(false, true);
  std::mt19937_64 gen(Catch::rngSeed());
  HostTensor q = gpu_test::randn(DType::bf16, {T, 8, 128}, gen);
  HostTensor k = gpu_test::randn(DType::bf16, {T, 2, 128}, gen);
  HostTensor cache = gpu_test::randn(DType::f32, {L, 128}, gen);
  HostTensor pos = HostTensor::zeros(DType::i64, {T});
  std::uniform_int_distribution<int64_t> at(0, L - 17);
  for (int64_t t = 0; t < T; ++t)
    pos.data<int64_t>()[t] = at(gen);
  rt::DeviceBuffer dq(bytes(q)), dk(bytes(k)), dc(bytes(cache)), dp(bytes(pos));
  dq.upload(q.raw(), bytes(q));
  dk.upload(k.raw(), bytes(k));
  dc.upload(cache.raw(), bytes(cache));
  dp.upload(pos.raw(), bytes(pos));
  auto view = [](const rt::DeviceBuffer &b, const HostTensor &t) {
    return rt::TensorView::contiguous(b.ptr(), t.dtype(), t.shape());
  };
  transform::apply_rotary(view(dq, q), view(dc, cache), view(dk, k),
                          view(dp, pos), interleaved, /*conjugate=*/false,
                          /*seqlen_offset=*/16, nullptr);
  rt::synchronize(nullptr);
  HostTensor got_q = HostTensor::zeros(DType::bf16, q.shape());
  HostTensor got_k = HostTensor::zeros(DType::bf16, k.shape());
  dq.download(got_q.raw(), bytes(q));
  dk.download(got_k.raw(), bytes(k));
  transform::apply_rotary_ref(q, cache, k, pos, interleaved, false, 16);
  CHECK(std::memcmp(got_q.raw(), q.raw(), bytes(q)) == 0);
  CHECK(std::memcmp(got_k.raw(), k.raw(), bytes(k)) == 0);
}
