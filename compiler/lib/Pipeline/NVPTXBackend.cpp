//===- NVPTXBackend.cpp - LLVM IR optimisation and NVPTX code generation -===//
//
// The last two stages of the pipeline, done here rather than by the NVVM
// target attribute's serializer, which links libdevice (tilejit needs none:
// every math op is lowered by tilejit), builds a target machine per call and
// runs LLVM's O3 module pipeline. Here:
//
// * one target machine per thread and (chip, features, level), reused;
// * the module pipeline is LLVM's O1 at every tilejit level above 0: the
//   MLIR stage has already canonicalised and CSE'd the kernel, and what O2
//   and O3 add (vectorisers, more unrolling and inlining) left the PTX of
//   every proving kernel unchanged while costing up to half the stage's time
//   (topk_gate: 26 ms at O3, 12 ms at O1, same PTX);
// * code generation at LLVM's -O2 (see codeGenLevel).
//
//===----------------------------------------------------------------------===//
#include "NVPTXBackend.h"

#include "tilejit/InitTilejit.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"

#include <map>
#include <memory>
#include <tuple>

using namespace mlir;

static constexpr const char *kTriple = "nvptx64-nvidia-cuda";

/// Code generation at LLVM's -O2 for tilejit levels 2 and 3: -O3
/// ("Aggressive") gave byte-identical PTX for every kernels.test
/// specialisation and took 10% longer.
static llvm::CodeGenOptLevel codeGenLevel(int level) {
  switch (level) {
  case 0:
    return llvm::CodeGenOptLevel::None;
  case 1:
    return llvm::CodeGenOptLevel::Less;
  default:
    return llvm::CodeGenOptLevel::Default;
  }
}

using MachineKey = std::tuple<std::string, std::string, int>;
/// This thread's target machines, one per (chip, features, level).
static thread_local std::map<MachineKey, std::unique_ptr<llvm::TargetMachine>>
    machines;

/// This thread's target machine for `options` (created on first use).
static FailureOr<llvm::TargetMachine *>
targetMachine(const tilejit::PipelineOptions &options, std::string &error) {
  MachineKey key{options.chip, options.features, options.optLevel};
  auto it = machines.find(key);
  if (it != machines.end())
    return it->second.get();
  llvm::Triple triple(kTriple);
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return failure();
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, options.chip, options.features, llvm::TargetOptions(),
      std::nullopt, std::nullopt, codeGenLevel(options.optLevel)));
  if (!machine) {
    error = "cannot create an NVPTX target machine for " + options.chip;
    return failure();
  }
  return machines.emplace(key, std::move(machine)).first->second.get();
}

static void optimize(llvm::Module &module, llvm::TargetMachine *machine,
                     int level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.SLPVectorization = false;
  tuning.LoopVectorization = false;
  llvm::PassBuilder builder(machine, tuning);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager passes =
      level == 0
          ? builder.buildO0DefaultPipeline(llvm::OptimizationLevel::O0)
          : builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O1);
  passes.run(module, mam);
}

FailureOr<std::string> tilejit::emitPTX(
    gpu::GPUModuleOp kernels, const PipelineOptions &options,
    llvm::function_ref<void(llvm::StringRef stage, double ms)> onTiming,
    llvm::function_ref<void(llvm::Module &)> onOptimizedIR) {
  std::string error;
  FailureOr<llvm::TargetMachine *> machine = targetMachine(options, error);
  if (failed(machine))
    return kernels.emitError("NVPTX target: ") << error;

  auto start = std::chrono::steady_clock::now();
  auto lap = [&](llvm::StringRef stage) {
    auto now = std::chrono::steady_clock::now();
    onTiming(stage,
             std::chrono::duration<double, std::milli>(now - start).count());
    start = now;
  };

  // NVPTX's data layout before the translation, which aligns each load and
  // store without an alignment of its own to its type's ABI alignment in
  // the module's layout: LLVM's default gives i64 and f64 4 bytes, and
  // NVPTX splits such loads into two 32-bit ones.
  kernels->setAttr(
      LLVM::LLVMDialect::getDataLayoutAttrName(),
      StringAttr::get(
          kernels.getContext(),
          (*machine)->createDataLayout().getStringRepresentation()));
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module =
      translateModuleToLLVMIR(kernels, context, kernels.getName());
  if (!module)
    return kernels.emitError("translation to LLVM IR failed");
  // gpu.dynamic_shared_memory arrives as an internal zero-length shared
  // array, which NVPTX prints as a 1-byte static variable in the kernel;
  // dynamic shared memory is an external declaration (`.extern .shared
  // .align 16 .b8 name[]`), placed by the launch after the static memory.
  for (llvm::GlobalVariable &global : module->globals())
    if (global.getAddressSpace() == 3 && global.getValueType()->isArrayTy() &&
        global.getValueType()->getArrayNumElements() == 0) {
      global.setInitializer(nullptr);
      global.setLinkage(llvm::GlobalValue::ExternalLinkage);
    }
  module->setDataLayout((*machine)->createDataLayout());
  module->setTargetTriple((*machine)->getTargetTriple());
  optimize(*module, *machine, options.optLevel);
  onOptimizedIR(*module);
  lap("llvm");

  std::string ptx;
  {
    llvm::raw_string_ostream os(ptx);
    llvm::buffer_ostream buffered(os);
    llvm::legacy::PassManager codegen;
    if ((*machine)->addPassesToEmitFile(codegen, buffered, nullptr,
                                        llvm::CodeGenFileType::AssemblyFile))
      return kernels.emitError("the NVPTX target cannot emit assembly");
    codegen.run(*module);
  }
  lap("ptx");
  return ptx;
}

void tilejit::discardTargetMachines() {
  for (auto &entry : machines)
    (void)entry.second.release();
  machines.clear();
}

std::string tilejit::checkTargetOptions(const PipelineOptions &options) {
  if (options.optLevel < 0 || options.optLevel > 3)
    return "CompileOptions.opt_level: " + std::to_string(options.optLevel) +
           " is out of range (0 to 3)";
  initializeNVPTXBackend();
  llvm::Triple triple(kTriple);
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return "the NVPTX target is missing: " + error;
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      target->createMCSubtargetInfo(triple, "", ""));
  if (!info->isCPUStringValid(options.chip))
    return "CompileOptions.chip: '" + options.chip +
           "' is not a processor that LLVM's NVPTX target knows (tilejit's "
           "kernels are written for sm_90a)";
  llvm::SmallVector<llvm::StringRef> features;
  llvm::StringRef(options.features).split(features, ',', -1, false);
  for (llvm::StringRef feature : features) {
    llvm::StringRef name = feature.drop_front();
    bool known = llvm::any_of(
        info->getAllProcessorFeatures(),
        [&](const llvm::SubtargetFeatureKV &kv) { return name == kv.Key; });
    if ((!feature.starts_with("+") && !feature.starts_with("-")) || !known)
      return "CompileOptions.features: '" + feature.str() +
             "' is not an NVPTX feature (a comma-separated list of +name or "
             "-name, e.g. +ptx80 or +ptx86)";
  }
  return "";
}
