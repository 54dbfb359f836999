// timing.cpp - The device-to-device copy that the memory-bound
// benchmarks compare with: the faster of the driver's copy and a plain
// 16-byte-vector copy kernel, both timed like the ops (rt::time_graph_ms).
#include "run.h"

#include "rotation.h"

#include "tilejit/runtime/buffer.h"
#include "tilejit/runtime/driver.h"
#include "tilejit/runtime/launch.h"
#include "tilejit/runtime/module.h"
#include "tilejit/runtime/timer.h"

#include <algorithm>
#include <mutex>

namespace tilejit::harness {
namespace {

// Each thread copies four 16-byte vectors, 256 threads apart: a block moves
// 16 KB with four loads in flight per thread. Written by hand, so that the
// roofline does not depend on tilejit's code generation.
constexpr const char *kCopyPtx = R"ptx(
.version 8.0
.target sm_90
.address_size 64

.visible .entry roofline_copy(
    .param .u64 roofline_copy_src,
    .param .u64 roofline_copy_dst,
    .param .u64 roofline_copy_vectors
)
{
    .reg .pred %p<5>;
    .reg .b32 %r<19>;
    .reg .b64 %rd<12>;

    ld.param.u64 %rd1, [roofline_copy_src];
    ld.param.u64 %rd2, [roofline_copy_dst];
    ld.param.u64 %rd3, [roofline_copy_vectors];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %tid.x;
    mul.wide.u32 %rd4, %r1, 1024;
    cvt.u64.u32 %rd5, %r2;
    add.s64 %rd4, %rd4, %rd5;
    add.s64 %rd5, %rd4, 256;
    add.s64 %rd6, %rd4, 512;
    add.s64 %rd7, %rd4, 768;
    setp.lt.u64 %p1, %rd4, %rd3;
    setp.lt.u64 %p2, %rd5, %rd3;
    setp.lt.u64 %p3, %rd6, %rd3;
    setp.lt.u64 %p4, %rd7, %rd3;
    shl.b64 %rd8, %rd4, 4;
    add.s64 %rd9, %rd1, %rd8;
    add.s64 %rd10, %rd2, %rd8;
    @%p1 ld.global.v4.u32 {%r3, %r4, %r5, %r6}, [%rd9];
    @%p2 ld.global.v4.u32 {%r7, %r8, %r9, %r10}, [%rd9+4096];
    @%p3 ld.global.v4.u32 {%r11, %r12, %r13, %r14}, [%rd9+8192];
    @%p4 ld.global.v4.u32 {%r15, %r16, %r17, %r18}, [%rd9+12288];
    @%p1 st.global.v4.u32 [%rd10], {%r3, %r4, %r5, %r6};
    @%p2 st.global.v4.u32 [%rd10+4096], {%r7, %r8, %r9, %r10};
    @%p3 st.global.v4.u32 [%rd10+8192], {%r11, %r12, %r13, %r14};
    @%p4 st.global.v4.u32 [%rd10+12288], {%r15, %r16, %r17, %r18};
    ret;
}
)ptx";

CUfunction copy_kernel() {
  static const rt::Module module =
      rt::Module::load(rt::link_ptx(kCopyPtx, "roofline_copy.ptx").cubin);
  static const CUfunction f = module.function("roofline_copy");
  return f;
}

} // namespace

double copy_roofline_ms(double bytes_moved, const RunOptions &options) {
  // A copy of half the bytes moves them: read plus write.
  const auto vectors = static_cast<uint64_t>(bytes_moved / 2 + 15) / 16;
  if (vectors == 0)
    return 0;
  const size_t bytes = vectors * 16;
  rt::DeviceBuffer from(bytes), to(bytes);
  const Rotation rotation({&from, &to}, bytes_moved);
  double driver = rt::time_graph_ms(
      [&](CUstream s, int call) {
        TILEJIT_CU_CHECK(cuMemcpyDtoDAsync(rotation.at(to.ptr(), call),
                                           rotation.at(from.ptr(), call), bytes,
                                           s));
      },
      options.warmup, options.iters);

  rt::LaunchConfig config;
  config.block = {256, 1, 1};
  config.grid = {static_cast<uint32_t>((vectors + 1023) / 1024), 1, 1};
  const CUfunction f = copy_kernel();
  double kernel = rt::time_graph_ms(
      [&](CUstream s, int call) {
        rt::ArgPack args;
        args.push(rotation.at(from.ptr(), call));
        args.push(rotation.at(to.ptr(), call));
        args.push(vectors);
        config.stream = s;
        rt::launch(f, config, args.data());
      },
      options.warmup, options.iters);
  return std::min(driver, kernel);
}

void settle_timing() {
  static std::once_flag once;
  std::call_once(once, [] {
    RunOptions options;
    options.warmup = 1;
    options.iters = 10;
    copy_roofline_ms(16e6, options);
  });
}

} // namespace tilejit::harness
