// launch.cpp - launch() through cuLaunchKernelEx, and ArgPack's storage.
#include "tilejit/runtime/launch.h"

#include "tilejit/error.h"
#include "tilejit/runtime/device.h"
#include "tilejit/runtime/driver.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

namespace tilejit::rt {

namespace {

/// Whether programmatic launches are on: TILEJIT_PDL unset or not "0" (read
/// once; "0" launches every kernel in plain stream order, to measure or to
/// rule it out).
bool programmatic_launches() {
  static const bool on = [] {
    const char *v = std::getenv("TILEJIT_PDL");
    return !(v && std::string_view(v) == "0");
  }();
  return on;
}

} // namespace

void launch(CUfunction f, const LaunchConfig &c, void **params) {
  const uint64_t threads =
      uint64_t{c.block.x} * uint64_t{c.block.y} * uint64_t{c.block.z};
  if (threads == 0 || threads > 1024)
    throw UserError(fmt::format("launch: block ({}, {}, {}) has {} threads; a "
                                "block must have 1 to 1024 threads",
                                c.block.x, c.block.y, c.block.z, threads));
  if (!f)
    throw UserError("launch: the kernel function is null; it must come from "
                    "Module::function");
  if (c.grid.x == 0 || c.grid.y == 0 || c.grid.z == 0)
    return;

  const Driver &d = driver();
  ensure_context();
  auto describe = [&] {
    return fmt::format("grid ({}, {}, {}), block ({}, {}, {}), {} bytes of "
                       "dynamic shared memory",
                       c.grid.x, c.grid.y, c.grid.z, c.block.x, c.block.y,
                       c.block.z, c.shared_bytes);
  };

  if (c.shared_bytes > 48 * 1024) {
    if (CUresult r = d.cuFuncSetAttribute(
            f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            static_cast<int>(c.shared_bytes));
        r != CUDA_SUCCESS)
      throw DriverError(fmt::format(
          "cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "
          "{}) failed: {} ({}); the kernel's static plus dynamic shared "
          "memory must fit Device::max_shared_per_block_optin()",
          c.shared_bytes, error_name(r), error_string(r)));
  }

  CUlaunchConfig config{};
  config.gridDimX = c.grid.x;
  config.gridDimY = c.grid.y;
  config.gridDimZ = c.grid.z;
  config.blockDimX = c.block.x;
  config.blockDimY = c.block.y;
  config.blockDimZ = c.block.z;
  config.sharedMemBytes = c.shared_bytes;
  config.hStream = c.stream;
  CUlaunchAttribute attr{};
  config.attrs = nullptr;
  config.numAttrs = 0;
  if (c.programmatic && programmatic_launches()) {
    attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
    config.attrs = &attr;
    config.numAttrs = 1;
  }
  if (CUresult r = d.cuLaunchKernelEx(&config, f, params, nullptr);
      r != CUDA_SUCCESS)
    throw DriverError(fmt::format("cuLaunchKernelEx failed: {} ({}) for {}",
                                  error_name(r), error_string(r), describe()));
}

void ArgPack::clear() noexcept {
  blocks_.clear();
  pointers_.clear();
  used_ = 0;
  capacity_ = 0;
}

void *ArgPack::allocate(std::size_t bytes, std::size_t align) {
  constexpr std::size_t kBlockBytes = 1024;
  align = std::max<std::size_t>(align, 16);
  std::size_t offset = (used_ + align - 1) / align * align;
  if (blocks_.empty() || offset + bytes > capacity_) {
    // Blocks are aligned to kMaxAlign, so offset 0 suits every slot.
    std::size_t size = std::max(kBlockBytes, bytes);
    blocks_.emplace_back(static_cast<std::byte *>(
        ::operator new (size, std::align_val_t{kMaxAlign})));
    capacity_ = size;
    offset = 0;
  }
  used_ = offset + bytes;
  return blocks_.back().get() + offset;
}

} // namespace tilejit::rt
