// jit.cpp - In-memory get-or-compile of kernels by specialisation key.
#include "common/jit.h"

#include "tilejit/runtime/device.h"
#include "tilejit/version.h"

#include <fmt/format.h>

#include <memory>
#include <mutex>
#include <unordered_map>

namespace tilejit::ops {

const std::string &key_prefix() {
  static const std::string prefix =
      fmt::format("tilejit-{}/llvm-{}/sm_90a", kVersion, kLLVMVersion);
  return prefix;
}

const LoadedKernel &get_or_compile(const std::string &key,
                                   const std::function<Kernel()> &build) {
  // One slot per key: the map lock is held only to find the slot; the
  // compile runs under the slot's once_flag, so other keys proceed.
  struct Slot {
    std::once_flag once;
    std::unique_ptr<LoadedKernel> kernel;
  };
  static std::mutex mutex;
  static std::unordered_map<std::string, std::unique_ptr<Slot>> cache;
  Slot *slot;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto &entry = cache[key];
    if (!entry)
      entry = std::make_unique<Slot>();
    slot = entry.get();
  }
  std::call_once(slot->once, [&] {
    auto loaded = std::make_unique<LoadedKernel>();
    loaded->compiled = compile(build());
    rt::LinkResult cubin =
        rt::link_ptx(loaded->compiled.ptx, loaded->compiled.name);
    loaded->module = rt::Module::load(cubin.cubin);
    loaded->function = loaded->module.function(loaded->compiled.name.c_str());
    slot->kernel = std::move(loaded);
  });
  return *slot->kernel;
}

} // namespace tilejit::ops
