// compile.h - Compile a tile kernel to PTX, keeping any stage's printed form.
#pragma once

#include "tilejit/compiler/kernel.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilejit {

/// The stages a compile passes through, in order. `sass` is produced outside
/// the compiler (ptxas + nvdisasm) and only named here for the CLI.
enum class Stage { tile, gpu, mlir, llvm, ptx, sass };

inline constexpr Stage kAllStages[] = {Stage::tile, Stage::gpu, Stage::mlir,
                                       Stage::llvm, Stage::ptx, Stage::sass};

std::string_view name_of(Stage s);
std::optional<Stage> parse_stage(std::string_view name);

struct CompileOptions {
  std::string chip = "sm_90a";
  std::string features = "+ptx80";
  int opt_level = 3;
  /// Stages whose printed form to keep in CompiledKernel::stages.
  std::vector<Stage> keep;
};

struct StageTime {
  std::string stage;
  double ms;
};

struct CompiledKernel {
  std::string name; ///< entry symbol in the PTX
  int threads = 0;  ///< block size the kernel was compiled for
  std::vector<KernelParam> params;
  /// How to launch it: arguments by name, grid rule, dynamic shared memory.
  KernelAbi abi;
  std::string ptx;
  std::map<Stage, std::string> stages; ///< printed stages asked for in `keep`
  std::vector<StageTime> timings;      ///< per stage, in pipeline order
};

/// Lowers `kernel` to PTX through the pipeline of Pipeline.cpp. The kernel is
/// not modified and can be compiled again. Throws UserError (lines
/// `file:line:col: error: ...` at the author's call) when the tile passes
/// cannot lower what the kernel asks for (a gemm WGMMA or mma.sync does not
/// take, more shared memory than a block has, ...), and InternalError (with
/// the compiler's diagnostics) when a later stage fails: tilejit's bug.
CompiledKernel compile(const Kernel &kernel,
                       const CompileOptions &options = {});

/// Kernel parameters as the driver receives them: a tensor of rank r becomes
/// 3 + 2r 64-bit words (allocated pointer, aligned pointer, offset, sizes,
/// strides in elements), a scalar one value of its type.
int abi_words(const KernelParam &param);

} // namespace tilejit
