// runtime_gpu_test.cpp - GPU tests of tilejit::rt on a real device.
#include "tilejit/error.h"
#include "tilejit/runtime/runtime.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <numeric>
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

// out[i] = in[i] * 2 for i < n; one thread per element.
// smem_reverse: one block copies in[0..n) into dynamic shared memory, then
// writes out[i] = smem[n - 1 - i], so the data must go through shared memory.
constexpr const char *kPtx = R"ptx(
.version 8.0
.target sm_90a
.address_size 64

.extern .shared .align 16 .b8 smem[];

.visible .entry scale2(
    .param .u64 scale2_param_in,
    .param .u64 scale2_param_out,
    .param .u32 scale2_param_n
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .f32 %f<3>;
    .reg .b64 %rd<8>;

    ld.param.u64 %rd1, [scale2_param_in];
    ld.param.u64 %rd2, [scale2_param_out];
    ld.param.u32 %r1, [scale2_param_n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.s32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd3, %rd1;
    cvta.to.global.u64 %rd4, %rd2;
    mul.wide.s32 %rd5, %r5, 4;
    add.s64 %rd6, %rd3, %rd5;
    ld.global.f32 %f1, [%rd6];
    mul.f32 %f2, %f1, 0f40000000;
    add.s64 %rd7, %rd4, %rd5;
    st.global.f32 [%rd7], %f2;
DONE:
    ret;
}

.visible .entry smem_reverse(
    .param .u64 smem_reverse_param_in,
    .param .u64 smem_reverse_param_out,
    .param .u32 smem_reverse_param_n
)
{
    .reg .pred %p<3>;
    .reg .b32 %r<12>;
    .reg .f32 %f<2>;
    .reg .b64 %rd<8>;

    ld.param.u64 %rd1, [smem_reverse_param_in];
    ld.param.u64 %rd2, [smem_reverse_param_out];
    ld.param.u32 %r1, [smem_reverse_param_n];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, smem;
    mov.u32 %r5, %r2;
LOAD:
    setp.ge.s32 %p1, %r5, %r1;
    @%p1 bra LOADED;
    mul.wide.s32 %rd3, %r5, 4;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.f32 %f1, [%rd4];
    shl.b32 %r6, %r5, 2;
    add.s32 %r7, %r4, %r6;
    st.shared.f32 [%r7], %f1;
    add.s32 %r5, %r5, %r3;
    bra LOAD;
LOADED:
    bar.sync 0;
    mov.u32 %r5, %r2;
STORE:
    setp.ge.s32 %p2, %r5, %r1;
    @%p2 bra DONE;
    sub.s32 %r8, %r1, %r5;
    sub.s32 %r8, %r8, 1;
    shl.b32 %r9, %r8, 2;
    add.s32 %r10, %r4, %r9;
    ld.shared.f32 %f1, [%r10];
    mul.wide.s32 %rd5, %r5, 4;
    add.s64 %rd6, %rd2, %rd5;
    st.global.f32 [%rd6], %f1;
    add.s32 %r5, %r5, %r3;
    bra STORE;
DONE:
    ret;
}
)ptx";

const Module &test_module() {
  static Module m = Module::load(link_ptx(kPtx, "runtime_gpu_test.ptx").cubin);
  return m;
}

std::vector<float> iota_floats(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(i) + 0.25f;
  return v;
}

} // namespace

TEST_CASE("GPU driver and device properties", "[runtime][gpu]") {
  REQUIRE(try_driver() != nullptr);
  CHECK(driver_version() >= CUDA_VERSION);
  CHECK_THAT(driver_status(), StartsWith("CUDA driver "));
  REQUIRE(device_count() > 0);

  Device &dev = Device::get(0);
  CHECK(&Device::get() == &dev);
  CHECK(dev.ordinal() == 0);
  CHECK_FALSE(dev.name().empty());
  CHECK(dev.sm_count() > 0);
  CHECK(dev.cc_major() >= 7);
  CHECK(dev.cc_minor() >= 0);
  CHECK(dev.max_shared_per_block_optin() > 48 * 1024);
  CHECK(dev.l2_bytes() > 0);
  CHECK(dev.context() != nullptr);
  dev.make_current();
  CUcontext current = nullptr;
  TILEJIT_CU_CHECK(cuCtxGetCurrent(&current));
  CHECK(current == dev.context());

  int count = device_count();
  CHECK_THAT(message_of([&] { Device::get(count); }),
             Equals("CUDA device ordinal " + std::to_string(count) +
                    " is out of range: this machine has " +
                    std::to_string(count) + " CUDA device" +
                    (count == 1 ? "" : "s") + "; the ordinal must be in [0, " +
                    std::to_string(count) + ")"));
  CHECK_THROWS_AS(Device::get(-1), UserError);
}

TEST_CASE("DeviceBuffer round trip, fill_zero and device-to-device copy",
          "[runtime][gpu]") {
  const std::size_t n = 1000, bytes = n * sizeof(float);
  std::vector<float> host = iota_floats(n), back(n, -1.0f);
  DeviceBuffer a(bytes);
  CHECK(a.size() == bytes);
  CHECK(a.ptr() != 0);
  CHECK(a.ptr() % 256 == 0);
  a.upload(host.data(), bytes);
  a.download(back.data(), bytes);
  CHECK(back == host);

  DeviceBuffer b(bytes);
  b.copy_from(a, bytes);
  std::vector<float> copied(n, -1.0f);
  b.download(copied.data(), bytes);
  CHECK(copied == host);

  a.fill_zero();
  a.download(back.data(), bytes);
  CHECK(back == std::vector<float>(n, 0.0f));
  // b is a separate allocation and kept its data.
  b.download(copied.data(), bytes);
  CHECK(copied == host);

  // Partial download.
  float first[2] = {};
  b.download(first, sizeof(first));
  CHECK(first[0] == host[0]);
  CHECK(first[1] == host[1]);

  CHECK_THAT(message_of([&] { a.upload(host.data(), bytes + 4); }),
             Equals("DeviceBuffer::upload: 4004 bytes exceed the buffer size "
                    "of 4000 bytes; the byte count must be at most the buffer "
                    "size"));
  DeviceBuffer small(16);
  CHECK_THAT(message_of([&] { small.copy_from(a, 32); }),
             Equals("DeviceBuffer::copy_from: 32 bytes exceed the destination "
                    "buffer size of 16 bytes; the byte count must be at most "
                    "the buffer size"));

  // Move leaves the source empty and the target owning the memory.
  CUdeviceptr p = a.ptr();
  DeviceBuffer moved = std::move(a);
  CHECK(moved.ptr() == p);
  CHECK(a.ptr() == 0);
  CHECK(a.size() == 0);
}

TEST_CASE("failed driver calls name the call and the error", "[runtime][gpu]") {
  CHECK_THAT(message_of([] { DeviceBuffer huge(std::size_t{1} << 50); }),
             Equals("cuMemAlloc(&p, bytes) failed: CUDA_ERROR_OUT_OF_MEMORY "
                    "(out of memory)"));
  CHECK_THROWS_AS(DeviceBuffer(std::size_t{1} << 50), DriverError);
  std::vector<char> garbage(64, 'x');
  CHECK_THAT(message_of([&] { Module::load(garbage); }),
             StartsWith("cuModuleLoadData(&module, cubin.data()) failed: "
                        "CUDA_ERROR_"));
}

TEST_CASE("link_ptx, Module and launch of a scale kernel", "[runtime][gpu]") {
  LinkResult link = link_ptx(kPtx, "runtime_gpu_test.ptx");
  REQUIRE(link.cubin.size() > 4);
  CHECK(std::string(link.cubin.data() + 1, 3) == "ELF");
  CHECK(link.wall_ms > 0);
  CHECK_THAT(link.info_log, Contains("scale2"));
  Module m = Module::load(link.cubin);
  CUfunction f = m.function("scale2");
  REQUIRE(f != nullptr);

  const int n = 100000;
  const std::size_t bytes = n * sizeof(float);
  std::vector<float> host = iota_floats(n), out(n, -1.0f);
  DeviceBuffer in(bytes), dst(bytes);
  in.upload(host.data(), bytes);
  dst.fill_zero();

  ArgPack args;
  args.push(in.ptr());
  args.push(dst.ptr());
  args.push(int32_t{n});
  LaunchConfig c;
  c.block = {256, 1, 1};
  c.grid = {(n + 255) / 256, 1, 1};
  launch(f, c, args.data());
  synchronize(kDefaultStream);
  dst.download(out.data(), bytes);
  int wrong = 0;
  for (int i = 0; i < n; ++i)
    wrong += out[i] != host[i] * 2.0f;
  CHECK(wrong == 0);

  SECTION("a grid with a 0 dimension launches nothing") {
    dst.fill_zero();
    c.grid = {0, 1, 1};
    launch(f, c, args.data());
    c.grid = {4, 1, 0};
    launch(f, c, args.data());
    synchronize(kDefaultStream);
    dst.download(out.data(), bytes);
    CHECK(out == std::vector<float>(n, 0.0f));
  }

  SECTION("on an owned non-blocking stream, timed") {
    Stream s;
    Stream s2 = std::move(s);
    c.stream = s2;
    dst.fill_zero();
    synchronize(kDefaultStream);
    double ms = time_ms([&] { launch(f, c, args.data()); }, s2, 2, 10);
    CHECK(ms > 0);
    s2.synchronize();
    dst.download(out.data(), bytes);
    CHECK(out[n - 1] == host[n - 1] * 2.0f);
  }

  SECTION("a missing kernel name is named in the error") {
    std::string what = message_of([&] { m.function("no_such_kernel"); });
    CHECK_THAT(what, Equals("cuModuleGetFunction(\"no_such_kernel\") failed: "
                            "CUDA_ERROR_NOT_FOUND (named symbol not found); "
                            "the module has no kernel named 'no_such_kernel'"));
    CHECK_THROWS_AS(m.function("no_such_kernel"), DriverError);
  }
}

TEST_CASE("time_graph_ms replays a captured graph", "[runtime][gpu]") {
  Module m = Module::load(link_ptx(kPtx, "runtime_gpu_test.ptx").cubin);
  CUfunction f = m.function("scale2");
  const int n = 100000;
  const std::size_t bytes = n * sizeof(float);
  std::vector<float> host = iota_floats(n), out(n, -1.0f);
  DeviceBuffer in(bytes), dst(bytes);
  in.upload(host.data(), bytes);
  ArgPack args;
  args.push(in.ptr());
  args.push(dst.ptr());
  args.push(int32_t{n});
  LaunchConfig c;
  c.block = {256, 1, 1};
  c.grid = {(n + 255) / 256, 1, 1};

  SECTION("replayed from a graph on the stream it is given") {
    dst.fill_zero();
    synchronize(kDefaultStream);
    std::vector<int> calls;
    double ms = time_graph_ms(
        [&](CUstream s, int call) {
          LaunchConfig on = c;
          on.stream = s;
          launch(f, on, args.data());
          calls.push_back(call);
        },
        2, 10, 3);
    CHECK(ms > 0);
    // Warm-up (2 + 1 before the capture), then the 10 captured: 0, 1, ... 12.
    std::vector<int> expected(2 + 1 + 10);
    std::iota(expected.begin(), expected.end(), 0);
    CHECK(calls == expected);
    synchronize(kDefaultStream);
    dst.download(out.data(), bytes);
    CHECK(out[n - 1] == host[n - 1] * 2.0f);
  }

  SECTION("a graph timer whose function queues nothing on its stream") {
    Stream other;
    LaunchConfig elsewhere = c;
    elsewhere.stream = other;
    CHECK_THAT(message_of([&] {
                 time_graph_ms(
                     [&](CUstream, int) { launch(f, elsewhere, args.data()); },
                     0, 4);
               }),
               Equals("time_graph_ms: the function queued no work on the "
                      "stream it was given; it must launch on that stream"));
    other.synchronize();
  }

  SECTION("a graph timer whose function throws while captured") {
    int calls = 0;
    auto throws_third = [&](CUstream s, int) {
      if (++calls == 3)
        throw UserError("third call");
      LaunchConfig on = c;
      on.stream = s;
      launch(f, on, args.data());
    };
    CHECK_THAT(message_of([&] { time_graph_ms(throws_third, 1, 4); }),
               Equals("third call"));
    CHECK(time_graph_ms(throws_third, 0, 2, 1) > 0); // no capture left open
  }

  SECTION("a link after a graph timer keeps its log") {
    // cuGraphInstantiate resolved by its base name is CUDA 11's, with an
    // error log buffer; called with the flags signature it wrote through a
    // garbage pointer, and the next JIT link crashed or logged to stdout.
    time_graph_ms(
        [&](CUstream s, int) {
          LaunchConfig on = c;
          on.stream = s;
          launch(f, on, args.data());
        },
        0, 2, 1);
    LinkResult link = link_ptx(kPtx, "after_graph.ptx");
    CHECK(link.cubin.size() > 4);
    CHECK_THAT(link.info_log, Contains("scale2"));
  }
}

TEST_CASE("launch with more than 48 KiB of dynamic shared memory",
          "[runtime][gpu]") {
  CUfunction f = test_module().function("smem_reverse");
  const int n = 16384; // 64 KiB of floats, all in shared memory
  const std::size_t bytes = n * sizeof(float);
  std::vector<float> host = iota_floats(n), out(n, -1.0f);
  DeviceBuffer in(bytes), dst(bytes);
  in.upload(host.data(), bytes);
  dst.fill_zero();

  ArgPack args;
  args.push(in.ptr());
  args.push(dst.ptr());
  args.push(int32_t{n});
  LaunchConfig c;
  c.grid = {1, 1, 1};
  c.block = {512, 1, 1};
  c.shared_bytes = static_cast<uint32_t>(bytes);
  launch(f, c, args.data());
  synchronize(kDefaultStream);
  dst.download(out.data(), bytes);
  int wrong = 0;
  for (int i = 0; i < n; ++i)
    wrong += out[i] != host[n - 1 - i];
  CHECK(wrong == 0);

  // More than the device allows: the attribute call fails and says so.
  c.shared_bytes =
      static_cast<uint32_t>(Device::get().max_shared_per_block_optin() + 1024);
  CHECK_THAT(message_of([&] { launch(f, c, args.data()); }),
             StartsWith("cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_"
                        "SHARED_SIZE_BYTES, " +
                        std::to_string(c.shared_bytes) + ") failed: "));
}

TEST_CASE("a PTX syntax error reports the linker log", "[runtime][gpu]") {
  const char *bad = R"ptx(
.version 8.0
.target sm_90a
.address_size 64

.visible .entry broken()
{
    this_is_not_an_instruction %r1;
    ret;
}
)ptx";
  std::string what;
  try {
    link_ptx(bad, "broken.ptx");
  } catch (const DriverError &e) {
    what = e.what();
  }
  CHECK_THAT(what, StartsWith("cuLinkAddData failed for PTX 'broken.ptx': "
                              "CUDA_ERROR_INVALID_PTX"));
  CHECK_THAT(what, Contains("\nptxas error log:\n"));
  CHECK_THAT(what, Contains("this_is_not_an_instruction"));
}
