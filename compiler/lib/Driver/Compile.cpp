//===- Compile.cpp - tilejit::compile: a Kernel to PTX via the pipeline --===//
#include "Diagnostics.h"
#include "FatalErrors.h"
#include "KernelImpl.h"

#include "tilejit/Pipeline/Pipeline.h"
#include "tilejit/compiler/compile.h"
#include "tilejit/error.h"

#include <algorithm>
#include <fmt/format.h>

using namespace mlir;

namespace tilejit {

std::string_view name_of(Stage s) {
  switch (s) {
  case Stage::tile:
    return "tile";
  case Stage::gpu:
    return "gpu";
  case Stage::mlir:
    return "mlir";
  case Stage::llvm:
    return "llvm";
  case Stage::ptx:
    return "ptx";
  case Stage::sass:
    return "sass";
  }
  return "?";
}

std::optional<Stage> parse_stage(std::string_view name) {
  for (Stage s : kAllStages)
    if (name_of(s) == name)
      return s;
  return std::nullopt;
}

int abi_words(const KernelParam &param) {
  return param.kind == KernelParam::Kind::tensor ? 3 + 2 * param.rank : 1;
}

/// The kernel's calling convention: its parameters in order, then those a
/// lowering appended (`tilejit.abi_extra`: the tensor maps of a pipelined
/// loop's TMA copies), unless a lowering replaced them all (`tilejit.abi` on
/// the lowered function, as the gemm's TMA lowering does, which may make it
/// persistent), its grid rule and its dynamic shared memory
/// (`tilejit.shared_bytes`).
static KernelAbi abiOf(const Kernel::Impl &impl, ModuleOp lowered) {
  KernelAbi abi;
  abi.threads = impl.threads;
  abi.programmatic = impl.programmatic;
  if (impl.grid) {
    abi.grid = *impl.grid;
    abi.has_grid = true;
  }
  for (const KernelParam &p : impl.params) {
    AbiArg a;
    a.kind = p.kind == KernelParam::Kind::tensor ? AbiArg::Kind::tensor
                                                 : AbiArg::Kind::scalar;
    a.name = p.name;
    a.dtype = p.dtype;
    a.rank = p.rank;
    a.unit_inner = p.unit_inner;
    a.align_bytes = p.align_bytes;
    abi.args.push_back(std::move(a));
  }
  auto parse = [&](ArrayAttr lines, StringRef attr) {
    std::string text, why;
    for (Attribute line : lines)
      text += cast<StringAttr>(line).str() + "\n";
    std::optional<KernelAbi> parsed = KernelAbi::parse(text, why);
    if (!parsed)
      throw InternalError(fmt::format("internal error: kernel '{}' has a "
                                      "malformed {}: {}",
                                      impl.name, attr.str(), why));
    return std::move(*parsed);
  };
  lowered->walk([&](Operation *op) {
    if (auto bytes = op->getAttrOfType<IntegerAttr>("tilejit.shared_bytes"))
      abi.shared_bytes = bytes.getInt();
    if (auto lines = op->getAttrOfType<ArrayAttr>("tilejit.abi_extra")) {
      KernelAbi extra = parse(lines, "tilejit.abi_extra");
      llvm::append_range(abi.args, extra.args);
    }
    if (auto lines = op->getAttrOfType<ArrayAttr>("tilejit.abi")) {
      KernelAbi parsed = parse(lines, "tilejit.abi");
      abi.args = std::move(parsed.args);
      abi.persistent = parsed.persistent;
    }
  });
  return abi;
}

CompiledKernel compile(const Kernel &kernel, const CompileOptions &options) {
  Kernel::Impl &impl = kernel.impl();
  OwningOpRef<ModuleOp> module(impl.module->clone());

  CompiledKernel out;
  out.name = impl.name;
  out.threads = impl.threads;
  out.params = impl.params;

  PipelineObserver observer;
  observer.wantsText = [&](StringRef stage) {
    std::optional<Stage> s = parse_stage(std::string_view(stage));
    return s && std::find(options.keep.begin(), options.keep.end(), *s) !=
                    options.keep.end();
  };
  observer.onText = [&](StringRef stage, StringRef text) {
    out.stages[*parse_stage(std::string_view(stage))] = text.str();
  };
  observer.onTiming = [&](StringRef stage, double ms) {
    out.timings.push_back({stage.str(), ms});
  };

  PipelineOptions pipeline;
  pipeline.chip = options.chip;
  pipeline.features = options.features;
  pipeline.optLevel = options.opt_level;
  if (std::string why = checkTargetOptions(pipeline); !why.empty())
    throw UserError(why);

  DiagnosticCollector diags(impl.context.get());
  FailureOr<std::string> ptx = failure();
  std::string fatal;
  if (!runCatchingFatalErrors(
          [&] { ptx = lowerToPTX(*module, pipeline, observer); }, fatal)) {
    discardTargetMachines();
    (void)module.release(); // its state is unknown: leaked, not destroyed
    // With the default target a fatal error is tilejit's bug; with the
    // caller's chip or features it is most likely their combination (LLVM:
    // "PTX version 6.0 does not support target 'sm_90a'").
    CompileOptions defaults;
    std::string what =
        fmt::format("LLVM stopped compiling kernel '{}' for {} ({}): {}",
                    impl.name, options.chip, options.features, fatal);
    if (options.chip == defaults.chip && options.features == defaults.features)
      throw InternalError("internal error: " + what);
    throw UserError(what);
  }
  // The tile passes (the first stage) report programs they cannot lower --
  // a layout, a gemm or a shared-memory size out of reach -- at the author's
  // line: that is the author's to fix. A conversion that fails to legalize,
  // or any later stage, is tilejit's bug.
  if (failed(ptx) && !out.timings.empty() &&
      out.timings.back().stage == "gpu" &&
      diags.text().find("failed to legalize") == std::string::npos &&
      !diags.empty())
    throw UserError(diags.errors());
  if (failed(ptx))
    throw InternalError(fmt::format(
        "internal error: lowering kernel '{}' failed after it verified:\n{}",
        impl.name, diags.text()));
  out.abi = abiOf(impl, *module);
  out.ptx = std::move(*ptx);
  if (std::find(options.keep.begin(), options.keep.end(), Stage::ptx) !=
      options.keep.end())
    out.stages[Stage::ptx] = out.ptx;
  return out;
}

} // namespace tilejit
