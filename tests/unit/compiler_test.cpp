// compiler_test.cpp - The DSL, tile IR parsing and the pipeline to PTX, on
// the CPU: what each stage holds and every user-facing compiler message.
#include "tilejit/compiler/compile.h"
#include "tilejit/compiler/dsl.h"
#include "tilejit/error.h"

#include <catch2/catch.hpp>

#include <string>

using namespace tilejit;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

Kernel scale_kernel(int block_m = 32, int block_n = 64, int threads = 256) {
  dsl::KernelBuilder k("scale", threads);
  auto x = k.tensor("x", DType::f32, 2);
  auto out = k.tensor("out", DType::f32, 2);
  auto s = k.scalar("s", DType::f32);
  auto row = k.block_id(0) * k.index(block_m);
  auto t = k.load(x, {row, k.index(0)}, {block_m, block_n});
  k.store(t * s, out, {row, k.index(0)});
  return k.build();
}

/// The message of the UserError `fn` throws ("" if it throws none).
template <typename Fn> std::string user_error(Fn &&fn) {
  try {
    fn();
  } catch (const UserError &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("a DSL kernel records its signature", "[compiler]") {
  Kernel k = scale_kernel();
  CHECK(k.name() == "scale");
  CHECK(k.threads() == 256);
  REQUIRE(k.params().size() == 3);
  CHECK(k.params()[0].name == "x");
  CHECK(k.params()[0].kind == KernelParam::Kind::tensor);
  CHECK(k.params()[0].rank == 2);
  CHECK(k.params()[2].name == "s");
  CHECK(k.params()[2].kind == KernelParam::Kind::scalar);
  CHECK(k.params()[2].dtype == DType::f32);
  CHECK(abi_words(k.params()[0]) == 7);
  CHECK(abi_words(k.params()[2]) == 1);
  CHECK_THAT(k.tile_ir(), Contains("tile.load") && Contains("tile.store") &&
                              Contains("tile.splat") &&
                              Contains("tile.threads = 256 : i32"));
}

TEST_CASE("compile lowers a kernel to PTX and keeps the stages asked for",
          "[compiler]") {
  Kernel k = scale_kernel();
  CompileOptions options;
  options.keep = {Stage::tile, Stage::gpu, Stage::mlir, Stage::llvm,
                  Stage::ptx};
  CompiledKernel c = compile(k, options);
  CHECK(c.name == "scale");
  CHECK(c.threads == 256);
  CHECK_THAT(c.ptx,
             Contains(".target sm_90a") && Contains(".visible .entry scale(") &&
                 Contains(".maxntid 256, 1, 1") && Contains("ld.global") &&
                 Contains("st.global") && Contains("mul.f32"));
  CHECK_THAT(c.stages[Stage::tile], Contains("tile.load"));
  CHECK_THAT(c.stages[Stage::gpu],
             Contains("gpu.func @scale") && Contains("gpu.thread_id"));
  CHECK_THAT(c.stages[Stage::mlir],
             Contains("llvm.func @scale") && Contains("nvvm.read.ptx.sreg"));
  CHECK_THAT(c.stages[Stage::llvm], Contains("@scale("));
  CHECK(c.stages[Stage::ptx] == c.ptx);
  REQUIRE(c.timings.size() == 4);
  CHECK(c.timings[0].stage == "gpu");
  CHECK(c.timings[1].stage == "mlir");
  CHECK(c.timings[2].stage == "llvm");
  CHECK(c.timings[3].stage == "ptx");
  // The optimised LLVM IR: no libdevice linked in, NVPTX's layout.
  CHECK_THAT(c.stages[Stage::llvm],
             !Contains("__nv_") && Contains("nvptx64-nvidia-cuda"));

  // The kernel is not consumed: a second compile gives the same PTX.
  CHECK(compile(k).ptx == c.ptx);
  // Stages not asked for are not printed.
  CHECK(compile(k).stages.empty());
}

TEST_CASE("a fragment that does not divide among the threads points at the "
          "author's line",
          "[compiler][error]") {
  // Deliberate mistake: 32x65 elements for 256 threads.
  int line = 0;
  std::string msg = user_error([&] {
    dsl::KernelBuilder k("bad", 256);
    auto x = k.tensor("x", DType::f32, 2);
    auto y = k.tensor("y", DType::f32, 2);
    // clang-format off
    line = __LINE__; auto t = k.load(x, {k.index(0), k.index(0)}, {32, 65});
    // clang-format on
    k.store(t, y, {k.index(0), k.index(0)});
    compile(k.build()); // tile-assign-layouts spreads fragments
  });
  CHECK_THAT(msg, Contains("compiler_test.cpp:" + std::to_string(line) + ":"));
  CHECK_THAT(msg, Contains("error: 'tile.load' op fragment "
                           "'tensor<32x65xf32>' has 2080 elements; requires a "
                           "multiple of the kernel's 256 threads"));
}

TEST_CASE("DSL misuse gives one-line errors at the author's line",
          "[compiler][error]") {
  int line = 0;
  // Deliberate mistake: index times float.
  std::string msg = user_error([&] {
    dsl::KernelBuilder k("bad", 256);
    auto s = k.scalar("s", DType::f32);
    line = __LINE__ + 1;
    k.mul(k.index(2), s);
  });
  CHECK_THAT(msg, StartsWith(std::string(__FILE__) + ":" +
                             std::to_string(line) + ":"));
  CHECK_THAT(msg, Contains("error: cannot multiply values of dtypes index and "
                           "f32; cast one of them first"));

  // Deliberate mistake: grid dimension 3.
  msg = user_error([] {
    dsl::KernelBuilder k("bad", 256);
    k.block_id(3);
  });
  CHECK_THAT(msg, Contains("error: block_id(3): requires a grid dimension 0, "
                           "1 or 2"));

  // Deliberate mistake: rank 0 tensor.
  msg = user_error([] {
    dsl::KernelBuilder k("bad", 256);
    k.tensor("x", DType::f32, 0);
  });
  CHECK_THAT(msg, Contains("error: tensor 'x' has rank 0; requires 1 to 6"));

  // Deliberate mistake: the origin has one index for a rank-2 tensor.
  msg = user_error([] {
    dsl::KernelBuilder k("bad", 256);
    auto x = k.tensor("x", DType::f32, 2);
    k.load(x, {k.index(0)}, {32, 64});
    k.build();
  });
  CHECK_THAT(msg, Contains("error: 'tile.load' op expects 2 indices for a "
                           "rank-2 tensor, got 1"));

  // Deliberate mistake: a tile no thread's registers hold (it compiled for
  // 11.7 s into spills, and a 1024 x 4096 one for minutes).
  msg = user_error([] {
    dsl::KernelBuilder k("huge", 256);
    auto x = k.tensor("x", DType::f32, 2);
    auto t = k.load(x, {k.index(0), k.index(0)}, {128, 4096});
    k.store(t, x, {k.index(0), k.index(0)});
    compile(k.build());
  });
  CHECK_THAT(msg, Contains("error: 'tile.load' op fragment "
                           "'tensor<128x4096xf32>' holds 2048 elements (8192 "
                           "bytes) in each of the kernel's 256 threads; "
                           "requires at most 1020 bytes a thread (255 "
                           "registers): a smaller tile or more threads"));

  // Deliberate mistake: 100 threads is not a multiple of the warp size.
  msg = user_error([] { dsl::KernelBuilder("bad", 100).build(); });
  CHECK_THAT(msg, Contains("error: kernel 'bad' has 100 threads; requires a "
                           "multiple of 32 from 32 to 1024"));
  CHECK(msg.find('\n') == std::string::npos); // one line, not the IR
}

TEST_CASE("Kernel::parse reports parse and verifier errors with locations",
          "[compiler][error]") {
  // Deliberate mistake: an op the tile dialect does not have.
  std::string msg = user_error([] {
    Kernel::parse("func.func @k() attributes {tile.threads = 256 : i32} {\n"
                  "  %0 = tile.nonsense 0\n  return\n}\n",
                  "bad.mlir");
  });
  CHECK_THAT(msg, StartsWith("bad.mlir:2:"));
  CHECK_THAT(msg, Contains("error: custom op 'tile.nonsense' is unknown"));

  // Deliberate mistake: no kernel at all.
  msg = user_error([] { Kernel::parse("func.func @f() { return }"); });
  CHECK(msg == "tile IR holds 0 kernels (func.func with 'tile.threads'); "
               "requires exactly one");
}

TEST_CASE("Kernel::parse accepts the printed form of a kernel", "[compiler]") {
  Kernel a = scale_kernel();
  Kernel b = Kernel::parse(a.tile_ir());
  CHECK(b.name() == "scale");
  CHECK(b.params().size() == 3);
  CHECK(compile(b).ptx == compile(a).ptx);
}

TEST_CASE("stage names round-trip", "[compiler]") {
  for (Stage s : kAllStages)
    CHECK(parse_stage(name_of(s)) == s);
  CHECK_FALSE(parse_stage("ptz").has_value());
}

TEST_CASE("a multiply feeding an add contracts to one FMA, as nvcc does",
          "[compiler]") {
  dsl::KernelBuilder k("axpb", 128);
  auto x = k.tensor("x", DType::f32, 1);
  auto a = k.scalar("a", DType::f32);
  auto b = k.scalar("b", DType::f32);
  auto t = k.load(x, {k.block_id(0) * k.index(256)}, {256});
  k.store(t * a + b, x, {k.block_id(0) * k.index(256)});
  Kernel kernel = k.build();
  CHECK_THAT(kernel.tile_ir(), Contains("fastmath<contract>"));
  CompiledKernel c = compile(kernel);
  CHECK_THAT(c.ptx, Contains("fma.rn.f32"));
  CHECK_THAT(c.ptx, !Contains("mul.rn.f32"));
}

TEST_CASE("aligned, unit-stride rows move with 16-byte vectors", "[compiler]") {
  auto kernel = [](dsl::Access access) {
    dsl::KernelBuilder k("copy", 256);
    auto x = k.tensor("x", DType::bf16, 2, access);
    auto out = k.tensor("out", DType::bf16, 2, access);
    auto row = k.block_id(0) * k.index(16);
    k.store(k.load(x, {row, k.index(0)}, {16, 256}), out, {row, k.index(0)});
    return compile(k.build()).ptx;
  };
  // bf16: 8 elements a vector.
  CHECK_THAT(kernel(dsl::inner_contiguous(16)),
             Contains("ld.global.v4.b32") && Contains("st.global.v4.b32"));
  CHECK_THAT(kernel({}), !Contains("ld.global.v4"));
  // 8-byte rows: 8-byte vectors.
  CHECK_THAT(kernel(dsl::inner_contiguous(8)), Contains("ld.global.v2.b32"));

  std::string msg = user_error([] {
    dsl::KernelBuilder k("bad", 256);
    k.tensor("x", DType::f32, 2, dsl::inner_contiguous(12));
  });
  CHECK_THAT(msg, Contains("error: tensor 'x': align_bytes is 12; requires 0 "
                           "or a power of two up to 256"));
}

namespace {
/// A batched transpose in the DSL: out[b, y, x] = in[b, x, y], one
/// block_x x block_y tile per block.
Kernel transpose_kernel(DType dtype, int block_x, int block_y,
                        dsl::Access access) {
  dsl::KernelBuilder k("tile_transpose", 256);
  auto in = k.tensor("in", dtype, 3, access);
  auto out = k.tensor("out", dtype, 3, access);
  auto b = k.block_id(2);
  auto x0 = k.block_id(1) * k.index(block_x);
  auto y0 = k.block_id(0) * k.index(block_y);
  auto t = k.load(in, {b, x0, y0}, {1, block_x, block_y});
  k.store(k.transpose(t), out, {b, y0, x0});
  return k.build();
}
} // namespace

TEST_CASE("transpose goes through shared memory", "[compiler]") {
  // f32: element by element through rows padded by one word.
  CompiledKernel c =
      compile(transpose_kernel(DType::f32, 64, 64, dsl::inner_contiguous(16)));
  CHECK_THAT(c.ptx, Contains(".shared .align") && Contains("st.shared.b32") &&
                        Contains("bar.sync") && Contains("ld.shared.b32") &&
                        Contains("ld.global.v4.b32") &&
                        Contains("st.global.v4.b32"));
  CHECK_THAT(c.ptx, Contains("[16640]")); // 64 rows of 64 + 1 floats

  // 1- and 2-byte elements: words exchanged by shuffles, transposed by byte
  // permutes, stored as words and read back as 16-byte vectors from an
  // unpadded (swizzled) buffer.
  for (DType dtype : {DType::bf16, DType::e4m3}) {
    CAPTURE(name_of(dtype));
    c = compile(transpose_kernel(dtype, 64, 64, dsl::inner_contiguous(16)));
    CHECK_THAT(c.ptx, Contains("shfl.sync.idx.b32") && Contains("prmt.b32") &&
                          Contains("st.shared.b32") &&
                          Contains("ld.shared.v4.b32") &&
                          Contains("st.global.v4.b32"));
    CHECK_THAT(c.ptx,
               Contains("[" + std::to_string(64 * 64 * size_of(dtype)) + "]"));
  }

  std::string msg = user_error([] {
    dsl::KernelBuilder k("bad", 256);
    auto x = k.tensor("x", DType::f32, 3);
    k.transpose(k.load(x, {k.index(0), k.index(0), k.index(0)}, {2, 32, 64}));
    k.build();
  });
  CHECK_THAT(msg, Contains("error: 'tile.transpose' op fragment "
                           "'tensor<2x32x64xf32>' has dimension 0 of size 2; "
                           "requires 1 before the last two"));
}

TEST_CASE("loops and branches carry fragments through every stage",
          "[compiler]") {
  using Values = std::vector<dsl::Value>;
  dsl::KernelBuilder k("loops", 256);
  auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
  auto n = k.scalar("n", DType::i64);
  auto t = k.load(x, {k.index(0), k.index(0)}, {16, 64});
  auto rowmax = k.reduce_max(t, 1);
  auto loop = k.serial(k.index(0), n, {t, rowmax}, [&](dsl::Value, Values c) {
    return Values{c[0] * t, c[1] + c[1]};
  });
  auto branch = k.if_else(
      k.gt(n, k.constant(2, DType::i64)), {loop[0]},
      [&](dsl::Value, Values c) { return Values{c[0] + c[0]}; },
      [&](dsl::Value, Values c) { return c; });
  k.store(branch[0] + k.broadcast(loop[1], {16, 64}), x,
          {k.index(0), k.index(0)});
  CompileOptions options;
  options.keep = {Stage::gpu};
  CompiledKernel c = compile(k.build(), options);
  // The loop carries the fragments' per-thread vectors, the if too.
  CHECK_THAT(c.stages[Stage::gpu],
             Contains("scf.for") && Contains("iter_args") &&
                 Contains("-> (vector<4xf32>, vector<4xf32>)") &&
                 Contains("scf.if") && Contains("-> (vector<4xf32>)"));
  CHECK_THAT(c.ptx, Contains("bra.uni") && Contains("ld.global.v4"));
}

TEST_CASE("log, log1p, softplus and casts from fp8 lower without libdevice",
          "[compiler]") {
  dsl::KernelBuilder k("math", 256);
  auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
  auto q = k.tensor("q", DType::e4m3, 2, dsl::inner_contiguous(16));
  auto t = k.load(x, {k.index(0), k.index(0)}, {16, 64});
  auto codes =
      k.cast(k.load(q, {k.index(0), k.index(0)}, {16, 64}), DType::f32);
  k.store(k.log(t) + k.log1p(t) + k.softplus(t) + codes, x,
          {k.index(0), k.index(0)});
  CompiledKernel c = compile(k.build());
  // CUDA's own sequences: log1pf's sum rounded toward zero, expf's
  // exponent rounded down and ex2.approx.ftz.
  CHECK_THAT(c.ptx, Contains("cvt.rn.f16x2.e4m3x2") && Contains("add.rz.f32") &&
                        Contains("fma.rm.f32") &&
                        Contains("ex2.approx.ftz.f32") && !Contains("__nv_") &&
                        !Contains("lg2.approx"));
}

TEST_CASE("atomics lower to PTX atom instructions", "[compiler]") {
  dsl::KernelBuilder k("atomics", 256);
  auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
  auto s = k.tensor("s", DType::f32, 2);
  auto i = k.tensor("i", DType::i32, 2);
  auto u = k.tensor("u", DType::u32, 2);
  auto t = k.load(x, {k.index(0), k.index(0)}, {16, 64});
  k.atomic_add(k.reduce_sum(t, 1), s, {k.index(0), k.index(0)});
  k.atomic_max(t, s, {k.index(0), k.index(0)});
  auto codes = k.cast(t, DType::i32);
  k.atomic_max(codes, i, {k.index(0), k.index(0)});
  k.atomic_max(k.bitcast(codes, DType::u32), u, {k.index(0), k.index(0)});
  CompiledKernel c = compile(k.build());
  // A float maximum has no atom instruction: a compare-and-swap loop.
  CHECK_THAT(c.ptx, Contains("atom.global.add.f32") &&
                        Contains("atom.global.max.s32") &&
                        Contains("atom.global.max.u32") &&
                        Contains(".global.cas.b32"));
}

TEST_CASE("compile options are checked before LLVM sees them",
          "[compiler][hardening]") {
  Kernel kernel = scale_kernel();
  auto with = [&](std::string chip, std::string features, int level) {
    CompileOptions options;
    options.chip = std::move(chip);
    options.features = std::move(features);
    options.opt_level = level;
    return user_error([&] { compile(kernel, options); });
  };
  // LLVM only warns about these, on stderr, and compiles for its default.
  CHECK(with("sm_999", "+ptx80", 3) ==
        "CompileOptions.chip: 'sm_999' is not a processor that LLVM's NVPTX "
        "target knows (tilejit's kernels are written for sm_90a)");
  CHECK(with("sm_90a", "+ptx80,+banana", 3) ==
        "CompileOptions.features: '+banana' is not an NVPTX feature (a "
        "comma-separated list of +name or -name, e.g. +ptx80 or +ptx86)");
  CHECK_THAT(with("sm_90a", "ptx80", 3), StartsWith("CompileOptions.features: "
                                                    "'ptx80' is not"));
  CHECK(with("sm_90a", "+ptx80", 4) ==
        "CompileOptions.opt_level: 4 is out of range (0 to 3)");
  CHECK(with("sm_90a", "+ptx80,+ptx86", 3).empty());
}

TEST_CASE("an LLVM fatal error in a compile is an error, not an exit",
          "[compiler][hardening][leaks]") {
  // LLVM's NVPTX subtarget reports this with report_fatal_error, which exits
  // the process unless tilejit's handler turns it into an error.
  Kernel kernel = scale_kernel();
  CompileOptions old_ptx;
  old_ptx.features = "+ptx60";
  for (int attempt = 0; attempt < 2; ++attempt)
    CHECK(user_error([&] { compile(kernel, old_ptx); }) ==
          "LLVM stopped compiling kernel 'scale' for sm_90a (+ptx60): PTX "
          "version 6.0 does not support target 'sm_90a'. Minimum required PTX "
          "version is 8.0. Either remove the PTX version to use the default, "
          "or increase it to at least 8.0.");
  // The thread compiles normally afterwards.
  CompiledKernel ok = compile(kernel);
  CHECK_THAT(ok.ptx, Contains(".entry scale("));
}

namespace {

/// Sums 32-row tiles of x over column chunks of `cols`: the chunk of step
/// k + stages - 1 is copied while step k reads its own.
CompiledKernel pipelined_sum(int stages, dsl::Access access,
                             int64_t cols = 64) {
  dsl::KernelBuilder k("pipelined_sum", 128);
  auto x = k.tensor("x", DType::f32, 2, access);
  auto out = k.tensor("out", DType::f32, 2);
  auto zero = k.index(0), row = k.block_id(0) * k.index(32);
  auto tile = k.alloc_shared(DType::f32, {32, cols});
  auto count = (k.dim(x, 1) + k.index(cols - 1)) / k.index(cols);
  auto sum = k.pipelined(
      count, stages, {k.full({32, cols}, 0, DType::f32)},
      [&](dsl::Value step, std::vector<dsl::Value> acc) {
        k.copy(x, {row, step * k.index(cols)}, tile);
        return std::vector{acc[0] + k.load(tile, {zero, zero}, {32, cols})};
      });
  k.store(sum[0], out, {row, zero});
  CompileOptions options;
  options.keep = {Stage::gpu};
  return compile(k.build(), options);
}

} // namespace

TEST_CASE("pipelined copies run stages ahead on cp.async", "[compiler]") {
  auto kernel = [](int stages, dsl::Access access) {
    return pipelined_sum(stages, access);
  };
  // Rows of 320 elements, more than a TMA box's 256: three 32 x 320
  // buffers, 16-byte pieces that read only what is inside.
  CompiledKernel c = pipelined_sum(3, dsl::inner_contiguous(16), 320);
  CHECK_THAT(c.stages[Stage::gpu],
             Contains("memref<3x32x320xf32, #gpu.address_space<workgroup>>") &&
                 Contains("nvgpu.device_async_copy") &&
                 Contains("{bypassL1}") && !Contains("nvgpu.tma"));
  CHECK_THAT(c.ptx, Contains("cp.async.cg.shared.global [") &&
                        Contains("cp.async.commit_group") &&
                        Contains("cp.async.wait_group \t1;") &&
                        Contains("bar.sync"));
  CHECK(c.abi.args.size() == 2);
  // Rows aligned to 4 bytes: one element a piece, through L1.
  CHECK_THAT(kernel(2, dsl::inner_contiguous(4)).ptx,
             Contains("cp.async.ca.shared.global [") && Contains("], 4, ") &&
                 !Contains("cp.async.cg"));
  // A tensor of any inner stride: element by element, loads and shared
  // stores (cp.async needs unit stride); two stages wait for no group.
  CompiledKernel strided = kernel(2, dsl::Access{});
  CHECK_THAT(strided.ptx, !Contains("cp.async.cg") &&
                              !Contains("cp.async.ca") &&
                              Contains("cp.async.wait_group \t0;") &&
                              Contains("st.shared.b32"));
}

TEST_CASE("pipelined copies run on TMA where each can be one", "[compiler]") {
  // Rows promised 16-byte aligned, 32 x 64 f32 tiles: one TMA copy a step
  // into 128-byte aligned stages, an mbarrier each, the tensor map a
  // by-value parameter the launch binds to x.
  CompiledKernel c = pipelined_sum(3, dsl::inner_contiguous(16));
  CHECK_THAT(c.stages[Stage::gpu],
             Contains("nvgpu.tma.async.load") && Contains("num_barriers = 3") &&
                 Contains("memref<3x32x64xf32, #gpu.address_space<workgroup>> "
                          "{llvm.align = 128 : i64}") &&
                 !Contains("nvgpu.device_async_copy"));
  CHECK_THAT(c.ptx,
             Contains("cp.async.bulk.tensor.2d.shared::cluster.global.tile."
                      "mbarrier::complete_tx::bytes") &&
                 Contains("mbarrier.arrive.expect_tx") &&
                 Contains("mbarrier.try_wait.parity") &&
                 Contains(".param .align 64 .b8 pipelined_sum_param_") &&
                 Contains(".shared .align 128 .b8") &&
                 !Contains("cp.async.cg") && !Contains("cp.async.wait_group"));
  REQUIRE(c.abi.args.size() == 3);
  const AbiArg &map = c.abi.args.back();
  CHECK(map.kind == AbiArg::Kind::tensor_map);
  CHECK(map.name == "x");
  CHECK(map.rank == 2);
  CHECK(map.box == std::vector<int64_t>{32, 64});
  CHECK(map.swizzle == 0);
  CHECK(c.abi.args[0].kind == AbiArg::Kind::tensor);
  // Inside another loop: the mbarriers are invalidated after each run, to
  // be initialised again by the next.
  dsl::KernelBuilder k("nested_sum", 128);
  auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
  auto out = k.tensor("out", DType::f32, 2);
  auto zero = k.index(0);
  auto tile = k.alloc_shared(DType::f32, {32, 64});
  k.serial(zero, k.index(4), {}, [&](dsl::Value r, std::vector<dsl::Value>) {
    auto row = r * k.index(32);
    auto sum = k.pipelined(
        k.index(8), 2, {k.full({32, 64}, 0, DType::f32)},
        [&](dsl::Value step, std::vector<dsl::Value> acc) {
          k.copy(x, {row, step * k.index(64)}, tile);
          return std::vector{acc[0] + k.load(tile, {zero, zero}, {32, 64})};
        });
    k.store(sum[0], out, {row, zero});
    return std::vector<dsl::Value>{};
  });
  const CompiledKernel nested = compile(k.build());
  CHECK_THAT(nested.ptx, Contains("mbarrier.inval.shared.b64") &&
                             Contains("cp.async.bulk.tensor.2d"));
  CHECK_THAT(c.ptx, !Contains("mbarrier.inval"));
  // One stage: cp.async (the pipeline's TMA form needs two or more).
  CHECK_THAT(pipelined_sum(1, dsl::inner_contiguous(16)).ptx,
             Contains("cp.async.cg") && !Contains("cp.async.bulk"));
  // A tensor declared as a view that may repeat elements (a zero stride,
  // which TMA cannot read): cp.async, no tensor map.
  CompiledKernel repeats =
      pipelined_sum(3, dsl::repeating(dsl::inner_contiguous(16)));
  CHECK_THAT(repeats.ptx,
             Contains("cp.async.cg") && !Contains("cp.async.bulk"));
  CHECK(repeats.abi.args.size() == 2);
}

TEST_CASE("kernels beyond 48 KB of shared memory take it dynamically",
          "[compiler]") {
  auto kernel = [](int64_t rows) {
    dsl::KernelBuilder k("big_tile", 256);
    auto x = k.tensor("x", DType::f32, 2, dsl::inner_contiguous(16));
    auto zero = k.index(0);
    auto tile = k.alloc_shared(DType::f32, {rows, 64});
    k.copy(x, {zero, zero}, tile);
    k.store(k.load(tile, {zero, zero}, {rows, 64}) +
                k.load(tile, {zero, zero}, {rows, 64}),
            x, {zero, zero});
    return compile(k.build());
  };
  // 32 KB: a static buffer, nothing to ask the launch for.
  CompiledKernel small = kernel(128);
  CHECK(small.abi.shared_bytes == 0);
  CHECK_THAT(small.ptx,
             Contains(".shared .align 16 .b8") && !Contains(".extern .shared"));
  // 96 KB: dynamic shared memory, its bytes in the calling convention.
  CompiledKernel big = kernel(384);
  CHECK(big.abi.shared_bytes == 384 * 64 * 4);
  CHECK_THAT(big.ptx, Contains(".extern .shared .align 16 .b8"));
}

TEST_CASE("a gemm's epilogue of tile ops compiles into the WGMMA kernel",
          "[compiler][gemm]") {
  dsl::KernelBuilder k("fused_gemm", 384);
  auto a = k.tensor("a", DType::bf16, 2, dsl::inner_contiguous(16));
  auto b = k.tensor("b", DType::bf16, 2, dsl::inner_contiguous(16));
  auto c = k.tensor("c", DType::bf16, 2, dsl::inner_contiguous(4));
  auto bias = k.tensor("bias", DType::f32, 2);
  auto alpha = k.scalar("alpha", DType::f32);
  k.grid({k.blocks(a, 0, 128), k.blocks(b, 0, 128)});
  auto m0 = k.block_id(0) * k.index(128), n0 = k.block_id(1) * k.index(128);
  auto sa = k.alloc_shared(DType::bf16, {128, 64});
  auto sb = k.alloc_shared(DType::bf16, {128, 64});
  auto steps = (k.dim(a, 1) + k.index(63)) / k.index(64);
  auto acc = k.pipelined(steps, 4, {k.full({128, 128}, 0.0, DType::f32)},
                         [&](dsl::Value step, std::vector<dsl::Value> carried) {
                           k.copy(a, {m0, step * k.index(64)}, sa);
                           k.copy(b, {n0, step * k.index(64)}, sb);
                           return std::vector{k.gemm(sa, sb, carried[0])};
                         })[0];
  auto cols = k.broadcast(k.load(bias, {k.index(0), n0}, {1, 128}), {128, 128});
  k.store(k.cast(acc * alpha + cols, DType::bf16), c, {m0, n0});
  CompiledKernel compiled = compile(k.build());
  // Each thread's 32 columns of bias read once (not once a row) and
  // converted as it stores them.
  CHECK_THAT(compiled.ptx, Contains("wgmma.mma_async") &&
                               Contains("ld.global.b32") &&
                               Contains("cvt.rn.bf16.f32"));
  // The epilogue's vector and scalar come after the gemm's own arguments,
  // the last of which is the tiles along x the persistent kernel walks.
  std::vector<std::string> names;
  for (const AbiArg &arg : compiled.abi.args)
    names.push_back(arg.name);
  CHECK(names == std::vector<std::string>{"a", "b", "c", "a", "b", "a", "c",
                                          "grid", "alpha", "bias", "bias",
                                          "bias", "bias"});
  CHECK(compiled.abi.persistent);
  CHECK(compiled.abi.args[7].kind == AbiArg::Kind::blocks);
  CHECK(compiled.abi.args[7].dim == 0);
  CHECK(compiled.abi.args[8].kind == AbiArg::Kind::scalar);
  CHECK(compiled.abi.args[9].kind == AbiArg::Kind::pointer);
}
