// module.cpp - link_ptx via the JIT linker; Module load, unload, lookup.
#include "tilejit/runtime/module.h"

#include "scoped_context.h"
#include "tilejit/error.h"
#include "tilejit/runtime/device.h"
#include "tilejit/runtime/driver.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <utility>

namespace tilejit::rt {
namespace {

constexpr std::size_t kLogBytes = 64 * 1024;

/// Destroys a CUlinkState on every path; cuLinkComplete's image lives in it.
struct LinkState {
  CUlinkState state = nullptr;
  ~LinkState() {
    if (state)
      if (const Driver *d = try_driver())
        d->cuLinkDestroy(state);
  }
};

std::string log_text(const std::vector<char> &buf) {
  return std::string(buf.data(), strnlen(buf.data(), buf.size()));
}

} // namespace

LinkResult link_ptx(std::string_view ptx, std::string_view name_for_messages) {
  const Driver &d = driver();
  ensure_context();
  auto start = std::chrono::steady_clock::now();
  const std::string name(name_for_messages);

  std::vector<char> info(kLogBytes, '\0'), error(kLogBytes, '\0');
  CUjit_option options[] = {
      CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
      CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
      CU_JIT_LOG_VERBOSE};
  void *values[] = {
      info.data(), reinterpret_cast<void *>(std::uintptr_t{kLogBytes - 1}),
      error.data(), reinterpret_cast<void *>(std::uintptr_t{kLogBytes - 1}),
      reinterpret_cast<void *>(std::uintptr_t{1})};
  constexpr unsigned kOptions = sizeof(options) / sizeof(options[0]);

  auto fail = [&](CUresult r, const char *call) {
    std::string log = log_text(error);
    std::string msg = fmt::format("{} failed for PTX '{}': {} ({})", call, name,
                                  error_name(r), error_string(r));
    if (!log.empty())
      msg += "\nptxas error log:\n" + log;
    throw DriverError(msg);
  };

  LinkState link;
  if (CUresult r = d.cuLinkCreate(kOptions, options, values, &link.state);
      r != CUDA_SUCCESS)
    fail(r, "cuLinkCreate");

  // The JIT reads the PTX as a C string: pass it with its terminating NUL.
  const std::string text(ptx);
  if (CUresult r = d.cuLinkAddData(
          link.state, CU_JIT_INPUT_PTX, const_cast<char *>(text.c_str()),
          text.size() + 1, name.c_str(), 0, nullptr, nullptr);
      r != CUDA_SUCCESS)
    fail(r, "cuLinkAddData");

  void *image = nullptr;
  std::size_t image_bytes = 0;
  if (CUresult r = d.cuLinkComplete(link.state, &image, &image_bytes);
      r != CUDA_SUCCESS)
    fail(r, "cuLinkComplete");

  LinkResult result;
  result.cubin.assign(static_cast<const char *>(image),
                      static_cast<const char *>(image) + image_bytes);
  result.info_log = log_text(info);
  result.maker = "driver";
  result.wall_ms = std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  return result;
}

Module Module::load(std::span<const char> cubin, int device_ordinal) {
  if (cubin.empty())
    throw UserError("Module::load: the image is empty (0 bytes); it must be "
                    "a cubin, e.g. LinkResult::cubin from link_ptx");
  const Device &dev = Device::get(device_ordinal);
  dev.make_current();
  CUmodule module = nullptr;
  TILEJIT_CU_CHECK(cuModuleLoadData(&module, cubin.data()));
  Module m;
  m.module_ = module;
  m.context_ = dev.context();
  return m;
}

Module::~Module() { reset(); }

Module::Module(Module &&other) noexcept
    : module_(std::exchange(other.module_, nullptr)),
      context_(std::exchange(other.context_, nullptr)) {}

Module &Module::operator=(Module &&other) noexcept {
  if (this != &other) {
    reset();
    module_ = std::exchange(other.module_, nullptr);
    context_ = std::exchange(other.context_, nullptr);
  }
  return *this;
}

void Module::reset() noexcept {
  if (module_)
    if (const Driver *d = try_driver()) {
      detail::ScopedContext scope(d, context_);
      d->cuModuleUnload(module_);
    }
  module_ = nullptr;
  context_ = nullptr;
}

CUfunction Module::function(const char *name) const {
  if (!module_)
    throw UserError(fmt::format("Module::function(\"{}\"): the Module is "
                                "empty; load one with Module::load first",
                                name ? name : ""));
  if (!name || !*name)
    throw UserError("Module::function: the kernel name is empty; it must "
                    "name a kernel (.entry) of the module");
  CUfunction f = nullptr;
  if (CUresult r = driver().cuModuleGetFunction(&f, module_, name);
      r != CUDA_SUCCESS)
    throw DriverError(fmt::format(
        "cuModuleGetFunction(\"{}\") failed: {} ({}){}", name, error_name(r),
        error_string(r),
        r == CUDA_ERROR_NOT_FOUND
            ? fmt::format("; the module has no kernel named '{}'", name)
            : ""));
  return f;
}

} // namespace tilejit::rt
