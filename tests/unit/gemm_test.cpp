// gemm_test.cpp - gemm's lowering: TMA copies, WGMMA and the tensor maps
// passed by value. Its argument checks are in its case table
// (kernels/gemm/gemm_test.cpp).
#include "gemm/gemm.h"

#include "op/op_def.h"

#include "tilejit/compiler/compile.h"
#include "tilejit/error.h"

#include <catch2/catch.hpp>

using namespace tilejit;
using rt::TensorView;

TEST_CASE("gemm lowers to TMA copies and WGMMA", "[kernels][compiler]") {
  for (int block_n : {128, 256}) {
    gemm::GemmSpec spec;
    spec.block_n = block_n;
    CompiledKernel compiled =
        compile(gemm::gemm_kernel(spec), CompileOptions{});
    INFO("block_n " << block_n);
    CHECK(compiled.ptx.find("cp.async.bulk.tensor.2d") != std::string::npos);
    CHECK(compiled.ptx.find("wgmma.mma_async.sync.aligned.m64n" +
                            std::to_string(block_n) + "k16.f32.bf16.bf16") !=
          std::string::npos);
    CHECK(compiled.ptx.find(".param .align 64 .b8 gemm_param_0[128]") !=
          std::string::npos);
  }
}

TEST_CASE("gemm_kernel takes an epilogue in place of its cast",
          "[kernels][compiler]") {
  gemm::GemmSpec spec;
  spec.full_tiles = 1;
  auto relu_scaled = [](dsl::KernelBuilder &k, dsl::Value acc, dsl::Value m0,
                        dsl::Value n0) {
    auto scale = k.tensor("scale", DType::f32, 2); // (M, 1)
    auto bias = k.tensor("bias", DType::f32, 2);   // (1, N)
    auto alpha = k.scalar("alpha", DType::f32);
    auto rows =
        k.broadcast(k.load(scale, {m0, k.index(0)}, {128, 1}), acc.shape());
    // 256 columns: a vector that the 384 threads do not divide.
    auto cols =
        k.broadcast(k.load(bias, {k.index(0), n0}, {1, 256}), acc.shape());
    return k.cast(
        k.max(acc * rows * alpha + cols, k.full(acc.shape(), 0.0, DType::f32)),
        DType::bf16);
  };
  CompiledKernel fused = compile(gemm::gemm_kernel(spec, relu_scaled));
  CompiledKernel plain = compile(gemm::gemm_kernel(spec));
  // The epilogue's vectors (pointer, rows, columns, row stride) and scalar
  // follow the gemm's 8 arguments in the order the epilogue uses them; its
  // maximum is in the WGMMA kernel, which the plain one does not have.
  REQUIRE(fused.abi.args.size() == plain.abi.args.size() + 9);
  CHECK(fused.abi.args[8].name == "scale");
  CHECK(fused.abi.args[8].kind == AbiArg::Kind::pointer);
  CHECK(fused.abi.args[11].kind == AbiArg::Kind::row_stride);
  CHECK(fused.abi.args[12].name == "alpha");
  CHECK(fused.abi.args[12].kind == AbiArg::Kind::scalar);
  CHECK(fused.abi.args[13].name == "bias");
  CHECK(fused.ptx.find("wgmma.mma_async") != std::string::npos);
  CHECK(fused.ptx.find("max.f32") != std::string::npos);
  // Every load of the epilogue's vectors comes before the first store to c
  // (a store may alias them: loads after it would wait one by one): the
  // stores' block (the epilogue, in the loop over the block's tiles) holds
  // no load.
  const size_t first_store = fused.ptx.find("st.global");
  REQUIRE(first_store != std::string::npos);
  const size_t block = fused.ptx.rfind("$L__", first_store);
  const size_t block_end = fused.ptx.find("\n$L__", first_store);
  REQUIRE(block != std::string::npos);
  CHECK(fused.ptx.find("ld.global") != std::string::npos);
  CHECK(fused.ptx.substr(block, block_end - block).find("ld.global") ==
        std::string::npos);
  CHECK(plain.ptx.find("max.f32") == std::string::npos);
}

TEST_CASE("the gemm op stores c through TMA where c's rows are 16-byte "
          "aligned",
          "[kernels][compiler]") {
  const ops::OpDef &op = gemm::gemm_op();
  const int64_t ab[2] = {256, 512};
  const TensorView a = TensorView::contiguous(0x100000, DType::bf16, ab),
                   b = TensorView::contiguous(0x200000, DType::bf16, ab);
  // The c argument of the kernel for a c view: a tensor map (TMA stores)
  // or a pointer (st.global).
  auto c_kind = [&](const TensorView &c) {
    const TensorView tensors[3] = {a, b, c};
    const ops::Call call(op, tensors, {});
    CompiledKernel k = compile(op.kernel(call));
    REQUIRE(k.abi.args.size() >= 3);
    CHECK(k.abi.persistent);
    return k.abi.args[2].kind;
  };
  const int64_t shape[2] = {256, 256};
  using Kind = AbiArg::Kind;
  CHECK(c_kind(TensorView::contiguous(0x300000, DType::bf16, shape)) ==
        Kind::tensor_map);
  CHECK(c_kind(TensorView::contiguous(0x300000, DType::f16, shape)) ==
        Kind::tensor_map);
  // A base 4 bytes past 16, rows of 516 bytes, an f32 c: st.global.
  CHECK(c_kind(TensorView::contiguous(0x300004, DType::bf16, shape)) ==
        Kind::pointer);
  const int64_t padded[2] = {264, 1}, odd[2] = {258, 1};
  CHECK(c_kind(TensorView::strided(0x300000, DType::bf16, shape, padded)) ==
        Kind::tensor_map);
  CHECK(c_kind(TensorView::strided(0x300000, DType::bf16, shape, odd)) ==
        Kind::pointer);
  CHECK(c_kind(TensorView::contiguous(0x300000, DType::f32, shape)) ==
        Kind::pointer);
}
