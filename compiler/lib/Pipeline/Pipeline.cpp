//===- Pipeline.cpp - The one place that orders tilejit's passes ---------===//
//
// Every stage is named, can be printed (PipelineObserver::onText) and timed
// (PipelineObserver::onTiming). The runtime and the CLI both call lowerToPTX;
// neither builds a pipeline of its own.
//
//===----------------------------------------------------------------------===//
#include "tilejit/Pipeline/Pipeline.h"

#include "NVPTXBackend.h"

#include "tilejit/Conversion/Passes.h"
#include "tilejit/Dialect/Tile/Transforms/Passes.h"
#include "tilejit/InitTilejit.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/BasicPtxBuilderInterface.h"
#include "mlir/Dialect/LLVMIR/Transforms/OptimizeForNVVM.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace mlir;

namespace {

/// Runs one named stage and reports its time and, if wanted, its output.
class StageRunner {
public:
  StageRunner(const tilejit::PipelineObserver &observer) : observer(observer) {}

  template <typename Fn> auto timed(StringRef stage, Fn &&fn) {
    auto start = std::chrono::steady_clock::now();
    auto result = fn();
    std::chrono::duration<double, std::milli> ms =
        std::chrono::steady_clock::now() - start;
    if (observer.onTiming)
      observer.onTiming(stage, ms.count());
    return result;
  }

  /// Runs `pm` on `module` as stage `stage`. The IR is verified once, at
  /// the end of the stage, rather than after each pass (a tenth of the
  /// MLIR stages' time went to verifying after every pass).
  LogicalResult run(StringRef stage, PassManager &pm, ModuleOp module) {
    pm.enableVerifier(false);
    return timed(stage, [&] {
      return success(succeeded(pm.run(module)) && succeeded(verify(module)));
    });
  }

  void print(StringRef stage, Operation *op) {
    if (!wants(stage))
      return;
    std::string text;
    llvm::raw_string_ostream os(text);
    op->print(os);
    observer.onText(stage, text);
  }

  bool wants(StringRef stage) const {
    return observer.onText && observer.wantsText && observer.wantsText(stage);
  }

  const tilejit::PipelineObserver &observer;
};

/// tile -> gpu: pipelined gemm main loops of 384-thread kernels become TMA +
/// WGMMA kernels, other pipelined loops cp.async loops; shared tiles and
/// fragments get layouts, then tile kernels become gpu.func kernels on
/// per-thread vectors.
void addTileToGPUPasses(OpPassManager &pm) {
  pm.addPass(tile::createConvertGemmToNVGPU());
  pm.addPass(tile::createLowerPipelined());
  pm.addPass(tile::createAssignSharedLayouts());
  pm.addPass(tile::createAssignLayouts());
  pm.addPass(tile::createConvertTileToGPU());
  // Folding and CSE of the per-slot index arithmetic; the mlir stage
  // canonicalises again, so one sweep without block merging is enough.
  GreedyRewriteConfig once;
  once.setMaxIterations(1);
  once.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
  pm.addPass(createCanonicalizerPass(once));
  pm.addPass(createCSEPass());
}

/// gpu -> mlir: upstream lowering of the gpu.module to the LLVM and NVVM
/// dialects (the kernel half of gpu-lower-to-nvvm-pipeline).
void addGPUToNVVMPasses(OpPassManager &pm, bool hasNVGPU) {
  // nvgpu (TMA, mbarriers, cp.async) to nvvm before scf-to-cf; nvvm's
  // PTX-builder ops (wgmma, mbarrier waits) to inline assembly. Only kernels
  // with gemms or copies have them; elsewhere the two walks would change
  // nothing.
  if (hasNVGPU) {
    pm.addPass(createConvertNVGPUToNVVMPass());
    pm.addPass(createConvertNVVMToLLVMPass());
  }
  // Without rollback support (its patterns never fail after changing the
  // IR): topk_gate's scf-to-cf went from 7.4 to 1.8 ms.
  SCFToControlFlowPassOptions scf;
  scf.allowPatternRollback = false;
  pm.addPass(createSCFToControlFlowPass(scf));
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // arith before gpu-to-nvvm, which would turn float min/max into libdevice
  // calls.
  pm.addPass(createArithToLLVMConversionPass());
  ConvertIndexToLLVMPassOptions index;
  index.indexBitwidth = 64;
  pm.addPass(createConvertIndexToLLVMPass(index));

  // One canonicalisation and CSE after the last conversion is enough: the
  // LLVM stage cleans up after it. (Upstream's pipeline also runs
  // llvm-optimize-for-nvvm-target, which only rewrites f16 divisions, after
  // another walk of every op.)
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.indexBitwidth = 64;
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  if (hasNVGPU)
    kernels.addPass(tile::createTensorMapParams());
  GreedyRewriteConfig once;
  once.setMaxIterations(1);
  once.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
  kernels.addPass(createCanonicalizerPass(once));
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
}

} // namespace

FailureOr<std::string> tilejit::lowerToPTX(ModuleOp module,
                                           const PipelineOptions &options,
                                           const PipelineObserver &observer) {
  initializeNVPTXBackend();
  StageRunner runner(observer);
  MLIRContext *ctx = module.getContext();

  runner.print("tile", module);

  PassManager toGPU(ctx);
  addTileToGPUPasses(toGPU);
  if (failed(runner.run("gpu", toGPU, module)))
    return failure();
  runner.print("gpu", module);

  bool hasNVGPU = false;
  module.walk([&](Operation *op) {
    hasNVGPU = isa<nvgpu::NVGPUDialect>(op->getDialect()) ||
               isa<NVVM::BasicPtxBuilderInterface>(op);
    return hasNVGPU ? WalkResult::interrupt() : WalkResult::advance();
  });
  PassManager toNVVM(ctx);
  addGPUToNVVMPasses(toNVVM, hasNVGPU);
  if (failed(runner.run("mlir", toNVVM, module)))
    return failure();
  runner.print("mlir", module);

  auto kernels = module.lookupSymbol<gpu::GPUModuleOp>("tilejit_kernels");
  if (!kernels)
    return module.emitError("the module holds no tile kernel");
  auto optimizedIR = [&](llvm::Module &llvmModule) {
    if (!runner.wants("llvm"))
      return;
    std::string text;
    llvm::raw_string_ostream os(text);
    llvmModule.print(os, nullptr);
    runner.observer.onText("llvm", text);
  };
  auto timing = [&](StringRef stage, double ms) {
    if (observer.onTiming)
      observer.onTiming(stage, ms);
  };
  return emitPTX(kernels, options, timing, optimizedIR);
}
