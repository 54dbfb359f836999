// jit.h - From a specialisation key to a loaded kernel: build the DSL kernel,
// compile it, cache it in memory and on disk, link and load it.
#pragma once

#include "tilejit/compiler/compile.h"
#include "tilejit/runtime/kernel_cache.h"
#include "tilejit/runtime/module.h"

#include <functional>
#include <memory>
#include <string>

namespace tilejit::ops {

/// A kernel loaded into the current device's primary context; lives as long
/// as the process.
struct LoadedKernel {
  std::shared_ptr<const rt::CacheEntry> entry;
  rt::Module module;
  CUfunction function = nullptr;
  /// How to launch it (the compiler's report, kept in the cache entry).
  KernelAbi abi;
};

/// A key for `op` with the compiler's fingerprint already in it: tilejit's
/// version and build id, the LLVM version, the target, the options that
/// change code (TILEJIT_OPT_LEVEL) and who makes the cubin (`cubin`: ptxas
/// or driver, TILEJIT_PTXAS). Ops add their static parameters.
rt::SpecKey make_key(std::string op);

/// A compile as the JIT does it: the entry it caches and the compiler's
/// output (with the stages asked for).
struct JitCompile {
  rt::CacheEntry entry;
  CompiledKernel compiled;
};

/// Builds and compiles `build()` for `key` with this process's options
/// (TILEJIT_OPT_LEVEL), keeping `keep` stages and TILEJIT_DUMP's (written
/// to TILEJIT_DUMP_DIR), makes the cubin with ptxas when the key says so,
/// and prints TILEJIT_TIMINGS' line. What compile_cached does on a miss and
/// `tilejit compile` always does.
JitCompile compile_entry(const rt::SpecKey &key,
                         const std::function<Kernel()> &build,
                         const std::vector<Stage> &keep = {});

/// The PTX and cubin for `key`, compiling `build()` on a miss; no driver
/// needed. When the driver's linker makes cubins (key field cubin=driver),
/// a fresh entry holds PTX only and load_kernel adds the cubin. Honours
/// TILEJIT_DUMP / TILEJIT_DUMP_DIR (every stage of every kernel compiled; a
/// dump forces a compile, so the cache never hides one) and TILEJIT_TIMINGS
/// (stage times to stderr).
rt::CacheResult compile_cached(const rt::SpecKey &key,
                               const std::function<Kernel()> &build);

/// The loaded kernel for `key`: compile_cached, then make the cubin if the
/// entry has none (kept in the cache entry) and load it. Thread-safe; one load
/// per key.
const LoadedKernel &load_kernel(const rt::SpecKey &key,
                                const std::function<Kernel()> &build);

/// Compile options of this process (TILEJIT_OPT_LEVEL).
CompileOptions compile_options_from_env();

} // namespace tilejit::ops
