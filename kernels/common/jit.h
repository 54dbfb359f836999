// jit.h - Get a kernel's compiled module for a specialisation key, compiling
// it on first use (in-memory cache; the disk cache comes with the JIT issue).
#pragma once

#include "tilejit/compiler/compile.h"
#include "tilejit/runtime/module.h"

#include <functional>
#include <string>

namespace tilejit::ops {

/// A kernel loaded into the current device's primary context.
struct LoadedKernel {
  CompiledKernel compiled;
  rt::Module module;
  CUfunction function = nullptr;
};

/// Returns the kernel for `key`, building and compiling it with `build` the
/// first time. Thread-safe; two threads asking for one key compile it once.
const LoadedKernel &get_or_compile(const std::string &key,
                                   const std::function<Kernel()> &build);

/// The specialisation-key prefix every key starts with: tilejit and LLVM
/// versions and the target, so a key never outlives a change of compiler.
const std::string &key_prefix();

} // namespace tilejit::ops
