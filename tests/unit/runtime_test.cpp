// runtime_test.cpp - CPU unit tests of tilejit::rt (no CUDA driver needed).
#include "tilejit/error.h"
#include "tilejit/runtime/runtime.h"
#include "tilejit/runtime/tensor_map.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

using namespace tilejit;
using namespace tilejit::rt;
using Catch::Matchers::Contains;
using Catch::Matchers::Equals;
using Catch::Matchers::StartsWith;

namespace {

template <class Fn> std::string message_of(Fn &&fn) {
  try {
    fn();
  } catch (const std::exception &e) {
    return e.what();
  }
  FAIL("no exception was thrown");
  return {};
}

} // namespace

TEST_CASE("driver: absent driver is reported, present driver works",
          "[runtime]") {
  if (const Driver *d = try_driver()) {
    SUCCEED("driver present");
    CHECK(&driver() == d);
    CHECK(d->cuMemAlloc != nullptr);
    CHECK(driver_version() >= CUDA_VERSION);
    CHECK_THAT(driver_status(), StartsWith("CUDA driver "));
    CHECK(no_driver_reason().empty());
    return;
  }
  CHECK(driver_version() == 0);
  CHECK_THAT(driver_status(), Equals("no CUDA driver"));
  CHECK_FALSE(no_driver_reason().empty());
  CHECK(device_count() == 0);

  std::string what;
  int exit_code = 0;
  try {
    driver();
  } catch (const NoGpuError &e) {
    what = e.what();
    exit_code = e.exit_code();
  }
  CHECK_THAT(what, StartsWith("no CUDA driver: "));
  CHECK(what == "no CUDA driver: " + no_driver_reason());
  CHECK(what.find('\n') == std::string::npos);
  CHECK(exit_code == 77);

  // Everything that needs the driver says so with NoGpuError.
  CHECK_THROWS_AS(Device::get(0), NoGpuError);
  CHECK_THROWS_AS(DeviceBuffer(16), NoGpuError);
  CHECK_THROWS_AS(Stream(), NoGpuError);
  CHECK_THROWS_AS(link_ptx(".version 8.0", "x"), NoGpuError);
  CHECK_THROWS_AS(TILEJIT_CU_CHECK(cuCtxSynchronize()), NoGpuError);
}

TEST_CASE("driver: load failures give a one-line reason", "[runtime]") {
  // The cached driver cannot be reloaded in-process; load_driver is the
  // uncached loader that try_driver() runs once with libcuda_path().
  detail::DriverLoad l = detail::load_driver("/nonexistent/libcuda.so.1");
  CHECK(l.driver == nullptr);
  CHECK_THAT(l.reason,
             Equals("/nonexistent/libcuda.so.1: cannot open shared object "
                    "file: No such file or directory"));

  // A library that is not a CUDA driver (libc has no cuDriverGetVersion).
  l = detail::load_driver("libc.so.6");
  CHECK(l.driver == nullptr);
  CHECK_THAT(l.reason, Equals("libc.so.6 has no cuDriverGetVersion; it is not "
                              "a CUDA driver library"));

  if (!try_driver()) {
    CHECK_THAT(no_driver_reason(), Contains(detail::libcuda_path()));
  }
}

TEST_CASE("driver: TILEJIT_LIBCUDA selects the library", "[runtime]") {
  const char *old = std::getenv("TILEJIT_LIBCUDA");
  std::string saved = old ? old : "";
  ::setenv("TILEJIT_LIBCUDA", "/nonexistent", 1);
  CHECK(detail::libcuda_path() == "/nonexistent");
  CHECK_THAT(detail::load_driver(detail::libcuda_path()).reason,
             StartsWith("/nonexistent: cannot open shared object file"));
  ::setenv("TILEJIT_LIBCUDA", "", 1);
  CHECK(detail::libcuda_path() == "libcuda.so.1");
  ::unsetenv("TILEJIT_LIBCUDA");
  CHECK(detail::libcuda_path() == "libcuda.so.1");
  if (old)
    ::setenv("TILEJIT_LIBCUDA", saved.c_str(), 1);
}

TEST_CASE("driver: error texts and version strings", "[runtime]") {
  CHECK(cuda_version_string(13000) == "13.0");
  CHECK(cuda_version_string(12080) == "12.8");
  CHECK_NOTHROW(check(CUDA_SUCCESS, "cuInit(0)"));
  std::string what = message_of(
      [] { check(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc(&p, bytes)"); });
  if (try_driver())
    CHECK_THAT(what, Equals("cuMemAlloc(&p, bytes) failed: "
                            "CUDA_ERROR_OUT_OF_MEMORY (out of memory)"));
  else
    CHECK_THAT(what, Equals("cuMemAlloc(&p, bytes) failed: CUresult 2 "
                            "(unknown error)"));
  CHECK_THROWS_AS(check(CUDA_ERROR_INVALID_VALUE, "x"), DriverError);
}

TEST_CASE("TensorView: contiguous views", "[runtime]") {
  TensorView t = TensorView::contiguous(0x1000, DType::bf16, {4096, 7168});
  CHECK(t.rank == 2);
  CHECK(t.numel() == 4096 * 7168);
  CHECK(t.size(0) == 4096);
  CHECK(t.size(1) == 7168);
  CHECK(t.stride(0) == 7168);
  CHECK(t.stride(1) == 1);
  CHECK(t.is_contiguous());
  CHECK(t.to_string() == "bf16[4096, 7168] strides [7168, 1]");

  TensorView t3 = TensorView::contiguous(0, DType::f32, {2, 3, 4});
  CHECK(t3.to_string() == "f32[2, 3, 4] strides [12, 4, 1]");

  std::vector<int64_t> shape = {5};
  TensorView v = TensorView::contiguous(0, DType::i32, shape);
  CHECK(v.rank == 1);
  CHECK(v.numel() == 5);
  CHECK(v.is_contiguous());
  CHECK(v.to_string() == "i32[5] strides [1]");

  TensorView s = TensorView::contiguous(0, DType::f32, {});
  CHECK(s.rank == 0);
  CHECK(s.numel() == 1);
  CHECK(s.is_contiguous());
  CHECK(s.to_string() == "f32[] strides []");

  // Like PyTorch: size-0 dims give 0 elements and strides as if size 1.
  TensorView e = TensorView::contiguous(0, DType::f16, {2, 0, 3});
  CHECK(e.numel() == 0);
  CHECK(e.is_contiguous());
  CHECK(e.to_string() == "f16[2, 0, 3] strides [3, 3, 1]");

  TensorView six = TensorView::contiguous(0, DType::u8, {1, 2, 3, 4, 5, 6});
  CHECK(six.rank == 6);
  CHECK(six.numel() == 720);
  CHECK(six.stride(0) == 720);
}

TEST_CASE("TensorView: strided views", "[runtime]") {
  std::vector<int64_t> shape = {7168, 4096}, strides = {1, 7168};
  TensorView t = TensorView::strided(0, DType::bf16, shape, strides);
  CHECK_FALSE(t.is_contiguous());
  CHECK(t.to_string() == "bf16[7168, 4096] strides [1, 7168]");

  // Rank 1 with stride 2 is not contiguous; size-1 dims' strides are ignored.
  std::vector<int64_t> s1 = {8}, st1 = {2};
  CHECK_FALSE(TensorView::strided(0, DType::f32, s1, st1).is_contiguous());
  std::vector<int64_t> s2 = {4, 1, 8}, st2 = {8, 99, 1};
  CHECK(TensorView::strided(0, DType::f32, s2, st2).is_contiguous());
  // A broadcast (stride 0) dim of size > 1 is not contiguous.
  std::vector<int64_t> s3 = {4, 8}, st3 = {0, 1};
  CHECK_FALSE(TensorView::strided(0, DType::f32, s3, st3).is_contiguous());
  // Padded rows: [4, 8] with row stride 16.
  std::vector<int64_t> st4 = {16, 1};
  CHECK_FALSE(TensorView::strided(0, DType::f32, s3, st4).is_contiguous());
}

TEST_CASE("TensorView: errors name the value and the limit", "[runtime]") {
  CHECK_THAT(message_of([] {
               TensorView::contiguous(0, DType::f32, {1, 2, 3, 4, 5, 6, 7});
             }),
             Equals("TensorView: rank 7 is not supported (shape [1, 2, 3, 4, "
                    "5, 6, 7]); the rank must be at most 6"));
  CHECK_THROWS_AS(TensorView::contiguous(0, DType::f32, {1, 2, 3, 4, 5, 6, 7}),
                  UserError);
  CHECK_THAT(
      message_of([] {
        TensorView::contiguous(0, DType::f32, {2, -3});
      }),
      Equals("TensorView: dim 1 has size -3 (shape [2, -3]); sizes must be "
             ">= 0"));
  std::vector<int64_t> shape = {2, 3}, strides = {1};
  CHECK_THAT(
      message_of([&] { TensorView::strided(0, DType::f32, shape, strides); }),
      Equals("TensorView: 1 strides [1] given for rank-2 shape [2, 3]; give "
             "one stride per dim"));
  TensorView t = TensorView::contiguous(0, DType::f32, {2, 3});
  CHECK_THAT(message_of([&] { t.size(2); }),
             Equals("TensorView::size: dim 2 is out of range for rank-2 "
                    "tensor f32[2, 3] strides [3, 1]; the dim must be in "
                    "[0, 2)"));
  CHECK_THROWS_AS(t.stride(-1), UserError);
}

TEST_CASE("ArgPack: values and addresses survive many pushes", "[runtime]") {
  struct alignas(64) Big {
    unsigned char bytes[128];
  };
  ArgPack args;
  CHECK(args.size() == 0);
  CHECK(args.data() == nullptr);

  constexpr int kCount = 500;
  std::vector<void *> first_addresses;
  for (int i = 0; i < kCount; ++i) {
    switch (i % 4) {
    case 0:
      args.push(static_cast<int32_t>(i));
      break;
    case 1:
      args.push(static_cast<CUdeviceptr>(0x7f0000000000ull + i));
      break;
    case 2:
      args.push(static_cast<float>(i) * 0.5f);
      break;
    case 3: {
      Big b{};
      for (int k = 0; k < 128; ++k)
        b.bytes[k] = static_cast<unsigned char>(i + k);
      args.push(b);
      break;
    }
    }
    first_addresses.push_back(args.data()[i]);
  }
  REQUIRE(args.size() == kCount);

  void **p = args.data();
  for (int i = 0; i < kCount; ++i) {
    INFO("parameter " << i);
    CHECK(p[i] == first_addresses[i]); // stable across later pushes
    auto addr = reinterpret_cast<std::uintptr_t>(p[i]);
    CHECK(addr % 16 == 0);
    switch (i % 4) {
    case 0:
      CHECK(*static_cast<int32_t *>(p[i]) == i);
      break;
    case 1:
      CHECK(*static_cast<CUdeviceptr *>(p[i]) == 0x7f0000000000ull + i);
      break;
    case 2:
      CHECK(*static_cast<float *>(p[i]) == static_cast<float>(i) * 0.5f);
      break;
    case 3: {
      CHECK(addr % 64 == 0);
      auto *b = static_cast<Big *>(p[i]);
      CHECK(b->bytes[0] == static_cast<unsigned char>(i));
      CHECK(b->bytes[127] == static_cast<unsigned char>(i + 127));
      break;
    }
    }
  }
  // Slots do not overlap.
  for (int i = 0; i + 1 < kCount; ++i)
    CHECK(p[i] != p[i + 1]);

  // A move keeps the storage (and so the addresses) and empties the source.
  ArgPack moved = std::move(args);
  CHECK(moved.size() == kCount);
  CHECK(moved.data()[3] == first_addresses[3]);
  CHECK(args.size() == 0);
  args.push(int32_t{42});
  CHECK(*static_cast<int32_t *>(args.data()[0]) == 42);

  // A value larger than a storage block.
  struct Huge {
    int32_t v[1000];
  };
  Huge h{};
  h.v[0] = 1;
  h.v[999] = 999;
  moved.push(h);
  auto *hp = static_cast<Huge *>(moved.data()[kCount]);
  CHECK(hp->v[0] == 1);
  CHECK(hp->v[999] == 999);
  CHECK(moved.data()[0] == first_addresses[0]);
}

TEST_CASE("launch: block checks and empty grids need no driver", "[runtime]") {
  auto fake = reinterpret_cast<CUfunction>(std::uintptr_t{0x1});
  LaunchConfig c;
  c.grid = {0, 1, 1};
  c.block = {128, 1, 1};
  CHECK_NOTHROW(launch(fake, c, nullptr)); // empty grid: nothing to do
  c.grid = {4, 0, 1};
  CHECK_NOTHROW(launch(fake, c, nullptr));

  c.block = {0, 1, 1};
  CHECK_THAT(message_of([&] { launch(fake, c, nullptr); }),
             Equals("launch: block (0, 1, 1) has 0 threads; a block must have "
                    "1 to 1024 threads"));
  c.block = {32, 32, 2};
  CHECK_THAT(message_of([&] { launch(fake, c, nullptr); }),
             Equals("launch: block (32, 32, 2) has 2048 threads; a block must "
                    "have 1 to 1024 threads"));
  CHECK_THROWS_AS(launch(fake, c, nullptr), UserError);
  c.block = {32, 32, 1};
  c.grid = {1, 1, 1};
  CHECK_THAT(message_of([&] { launch(nullptr, c, nullptr); }),
             StartsWith("launch: the kernel function is null"));
}

TEST_CASE("DeviceBuffer: empty buffers need no driver", "[runtime]") {
  DeviceBuffer b(0);
  CHECK(b.ptr() == 0);
  CHECK(b.size() == 0);
  CHECK(b.empty());
  CHECK_NOTHROW(b.upload(nullptr, 0));
  CHECK_NOTHROW(b.download(nullptr, 0));
  CHECK_NOTHROW(b.fill_zero());
  int host[4] = {};
  CHECK_THAT(message_of([&] { b.upload(host, sizeof(host)); }),
             Equals("DeviceBuffer::upload: 16 bytes exceed the buffer size of "
                    "0 bytes; the byte count must be at most the buffer "
                    "size"));
  CHECK_THAT(message_of([&] { b.download(host, 8); }),
             Equals("DeviceBuffer::download: 8 bytes exceed the buffer size "
                    "of 0 bytes; the byte count must be at most the buffer "
                    "size"));
  DeviceBuffer c = std::move(b);
  CHECK(c.size() == 0);
}

TEST_CASE("time_ms: argument checks", "[runtime]") {
  CHECK_THAT(message_of([] { time_ms([] {}, kDefaultStream, 1, 0); }),
             Equals("time_ms: iters is 0; it must be >= 1"));
  CHECK_THAT(message_of([] { time_ms([] {}, kDefaultStream, -1, 5); }),
             Equals("time_ms: warmup is -1; it must be >= 0"));
}

TEST_CASE("time_graph_ms: argument checks", "[runtime]") {
  auto nothing = [](CUstream, int) {};
  CHECK_THAT(message_of([&] { time_graph_ms(nothing, 1, 0); }),
             Equals("time_graph_ms: iters is 0; it must be >= 1"));
  CHECK_THAT(message_of([&] { time_graph_ms(nothing, -1, 5); }),
             Equals("time_graph_ms: warmup is -1; it must be >= 0"));
  CHECK_THAT(message_of([&] { time_graph_ms(nothing, 1, 5, 0); }),
             Equals("time_graph_ms: replays is 0; it must be >= 1"));
  CHECK_THAT(message_of([] { time_graph_ms(nullptr, 1, 5); }),
             Equals("time_graph_ms: the function to time is empty"));
}

TEST_CASE("encode_tensor_map: its checks need no driver", "[runtime]") {
  const int64_t shape[3] = {2, 128, 64};
  const TensorView x = TensorView::contiguous(0x10000, DType::bf16, shape);
  const int64_t box[3] = {1, 64, 64};
  CHECK_THAT(message_of([&] {
               encode_tensor_map(
                   TensorView::contiguous(0x10008, DType::bf16, shape), "x",
                   box, 0);
             }),
             Equals("tensor map for 'x': base 0x10008 must be a multiple "
                    "of 16"));
  const int64_t odd_strides[3] = {128 * 68, 68, 1};
  CHECK_THAT(message_of([&] {
               encode_tensor_map(TensorView::strided(0x10000, DType::bf16,
                                                     shape, odd_strides),
                                 "x", box, 0);
             }),
             Equals("tensor map for 'x': bf16[2, 128, 64] strides [8704, 68, "
                    "1] has stride[1] of 136 bytes; requires a positive "
                    "multiple of 16 below 2^40"));
  const int64_t wide[3] = {1, 64, 512};
  CHECK_THAT(message_of([&] { encode_tensor_map(x, "x", wide, 0); }),
             Equals("tensor map for 'x': box [1, 64, 512] of bf16 is not "
                    "encodable (swizzle 0)"));
  const int64_t rows[2] = {64, 64};
  CHECK_THAT(message_of([&] { encode_tensor_map(x, "x", rows, 0); }),
             Equals("tensor map for 'x': box [64, 64] of bf16 is not "
                    "encodable (swizzle 0)"));
  const int64_t long_rows[3] = {1, 64, 128}; // 256-byte rows
  CHECK_THAT(message_of([&] { encode_tensor_map(x, "x", long_rows, 128); }),
             Equals("tensor map for 'x': box [1, 64, 128] of bf16 is not "
                    "encodable (swizzle 128)"));
  CHECK_THAT(message_of([&] { encode_tensor_map(x, "x", box, 64); }),
             Equals("tensor map for 'x': box [1, 64, 64] of bf16 is not "
                    "encodable (swizzle 64)"));
  const int64_t narrow[3] = {1, 64, 4};
  CHECK_THAT(message_of([&] { encode_tensor_map(x, "x", narrow, 0); }),
             Equals("tensor map for 'x': box [1, 64, 4] of bf16 is not "
                    "encodable (swizzle 0)"));
  // No elements: past every check (TMA takes no size 0: one element is
  // mapped), to the driver where there is one.
  const int64_t none[3] = {2, 0, 64};
  try {
    encode_tensor_map(TensorView::contiguous(0x10000, DType::bf16, none), "x",
                      box, 0);
  } catch (const std::exception &e) {
    CHECK_THAT(e.what(), StartsWith("no CUDA driver"));
  }
  CHECK_THAT(message_of([&] {
               encode_tensor_map(
                   TensorView::contiguous(0x10000, DType::f64, shape), "x", box,
                   0);
             }),
             Equals("tensor map for 'x': dtype f64 is not supported by TMA "
                    "here"));
}
