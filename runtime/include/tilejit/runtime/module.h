// module.h - PTX -> cubin linking with the driver's JIT, and loaded modules.
#pragma once

#include <cuda.h>

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tilejit::rt {

/// What link_ptx (or compile_with_ptxas, ptxas.h) produced.
struct LinkResult {
  std::vector<char> cubin; ///< The linked image, for Module::load.
  std::string info_log;    ///< ptxas/nvlink info messages; may be empty.
  std::string maker;       ///< "driver" (link_ptx) or "ptxas".
  double wall_ms = 0;      ///< Wall time of the whole link.
};

/// Compiles PTX text for the device of the current context (device 0 when no
/// context is current) with cuLinkCreate / cuLinkAddData(CU_JIT_INPUT_PTX) /
/// cuLinkComplete, which compiles it as a relocatable unit (see ptxas.h for
/// what that costs a wgmma kernel). `name_for_messages` names the PTX in the
/// logs and errors. Throws DriverError on failure: "<call> failed for PTX
/// '<name>': <error name> (<error string>)" followed by a line "ptxas error
/// log:" and the linker's error log (the log is left out when empty). Throws
/// NoGpuError without a driver.
LinkResult link_ptx(std::string_view ptx, std::string_view name_for_messages);

/// A loaded module (cuModuleLoadData) on one device's primary context.
/// Unloaded in the destructor (errors ignored); CUfunctions taken from it are
/// invalid afterwards. Move-only; a moved-from Module holds nothing.
class Module {
public:
  /// Loads a cubin (or PTX, NUL-terminated) image on device `device_ordinal`,
  /// making it current. Throws UserError for an empty image, DriverError when
  /// the driver rejects it (e.g. built for another architecture).
  static Module load(std::span<const char> cubin, int device_ordinal = 0);

  Module() = default;
  ~Module();
  Module(Module &&other) noexcept;
  Module &operator=(Module &&other) noexcept;
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

  CUmodule handle() const { return module_; }

  /// The kernel with this (mangled) name. Throws DriverError naming the
  /// kernel when the module has none of that name, UserError when the
  /// Module is empty.
  CUfunction function(const char *name) const;

private:
  void reset() noexcept;

  CUmodule module_ = nullptr;
  CUcontext context_ = nullptr;
};

} // namespace tilejit::rt
