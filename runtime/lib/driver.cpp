// driver.cpp - dlopen of libcuda and cuGetProcAddress of each entry point.
#include "tilejit/runtime/driver.h"

#include "tilejit/error.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

namespace tilejit::rt {
namespace {

std::string name_with(const Driver *d, CUresult r) {
  const char *name = nullptr;
  if (d && d->cuGetErrorName(r, &name) == CUDA_SUCCESS && name)
    return name;
  return fmt::format("CUresult {}", static_cast<int>(r));
}

std::string string_with(const Driver *d, CUresult r) {
  const char *str = nullptr;
  if (d && d->cuGetErrorString(r, &str) == CUDA_SUCCESS && str)
    return str;
  return "unknown error";
}

/// True when `versioned`, the name cuda.h maps `base` to, is `base` itself
/// or `base` with a version suffix (_v2): the functions cuGetProcAddress
/// resolves `base` to for CUDA_VERSION. Any other mapping (cuGraphInstantiate
/// -> cuGraphInstantiateWithFlags) would resolve `base` to a function of
/// another signature: CUDA 11's cuGraphInstantiate takes an error log buffer,
/// and called with the flags signature it wrote through a garbage pointer.
constexpr bool same_entry_point(std::string_view base,
                                std::string_view versioned) {
  if (versioned == base)
    return true;
  if (!versioned.starts_with(base) ||
      !versioned.substr(base.size()).starts_with("_v") ||
      versioned.size() == base.size() + 2)
    return false;
  return std::all_of(versioned.begin() + base.size() + 2, versioned.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

#define TILEJIT_STRINGIFY(x) #x
#define TILEJIT_EXPANDED_NAME(x) TILEJIT_STRINGIFY(x)
#define TILEJIT_CU_FN(name)                                                    \
  static_assert(same_entry_point(#name, TILEJIT_EXPANDED_NAME(name)),          \
                "cuda_functions.def: cuda.h maps " #name " to another "        \
                "function; list that function by its own name");
#include "tilejit/runtime/cuda_functions.def"
#undef TILEJIT_EXPANDED_NAME
#undef TILEJIT_STRINGIFY

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

detail::DriverLoad failed(void *handle, std::string reason) {
  if (handle)
    dlclose(handle);
  return {nullptr, one_line(std::move(reason))};
}

detail::DriverLoad load(const std::string &path) {
  dlerror();
  void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    return failed(nullptr, e ? e : fmt::format("{}: dlopen failed", path));
  }

  // cuDriverGetVersion works before cuInit; asking for it first gives a
  // clear message for an old driver, for which cuGetProcAddress would
  // otherwise just fail with CUDA_ERROR_INVALID_VALUE.
  auto get_version = reinterpret_cast<decltype(&::cuDriverGetVersion)>(
      dlsym(h, "cuDriverGetVersion"));
  int version = 0;
  if (!get_version)
    return failed(h, fmt::format("{} has no cuDriverGetVersion; it is not a "
                                 "CUDA driver library",
                                 path));
  if (CUresult r = get_version(&version); r != CUDA_SUCCESS)
    return failed(h, fmt::format("cuDriverGetVersion failed: CUresult {}",
                                 static_cast<int>(r)));
  if (version < CUDA_VERSION)
    return failed(h, fmt::format("{} is a CUDA {} driver; tilejit was built "
                                 "with CUDA {} headers and needs a driver "
                                 "for CUDA {} or newer",
                                 path, cuda_version_string(version),
                                 cuda_version_string(CUDA_VERSION),
                                 cuda_version_string(CUDA_VERSION)));

  // cuda.h #defines cuGetProcAddress to cuGetProcAddress_v2 (CUDA 12.0+).
  auto get_proc = reinterpret_cast<decltype(&::cuGetProcAddress)>(
      dlsym(h, "cuGetProcAddress_v2"));
  if (!get_proc)
    return failed(h, fmt::format("{} has no cuGetProcAddress_v2; a driver for "
                                 "CUDA 12.0 or newer is required",
                                 path));

  auto d = std::make_unique<Driver>();
  d->version = version;
  std::string missing;
  auto resolve = [&](const char *name, void **slot) {
    CUdriverProcAddressQueryResult status =
        CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult r = get_proc(name, slot, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT,
                          &status);
    if (r != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS || !*slot) {
      *slot = nullptr;
      missing += missing.empty() ? "" : ", ";
      missing += name;
    }
  };
#define TILEJIT_CU_FN(name) resolve(#name, reinterpret_cast<void **>(&d->name));
#include "tilejit/runtime/cuda_functions.def"
  if (!missing.empty())
    return failed(h, fmt::format("{} (CUDA {}) provides no {} for CUDA {}",
                                 path, cuda_version_string(version), missing,
                                 cuda_version_string(CUDA_VERSION)));

  if (CUresult r = d->cuInit(0); r != CUDA_SUCCESS)
    return failed(h,
                  fmt::format("cuInit failed: {} ({})", name_with(d.get(), r),
                              string_with(d.get(), r)));
  // Success: the library stays loaded for the life of the process.
  return {std::move(d), {}};
}

// Leaked on purpose so that destructors of other static objects can still
// reach the driver during exit.
const detail::DriverLoad &loaded() {
  static const detail::DriverLoad *once =
      new detail::DriverLoad(detail::load_driver(detail::libcuda_path()));
  return *once;
}

} // namespace

namespace detail {

std::string libcuda_path() {
  const char *env = std::getenv("TILEJIT_LIBCUDA");
  return env && *env ? env : "libcuda.so.1";
}

DriverLoad load_driver(const std::string &path) noexcept {
  try {
    return load(path);
  } catch (const std::exception &e) {
    return {nullptr, fmt::format("loading {} failed: {}", path, e.what())};
  } catch (...) {
    return {nullptr, fmt::format("loading {} failed", path)};
  }
}

void throw_driver_error(CUresult r, const char *call) {
  const Driver *d = try_driver();
  throw DriverError(fmt::format("{} failed: {} ({})", call, name_with(d, r),
                                string_with(d, r)));
}

} // namespace detail

const Driver *try_driver() noexcept { return loaded().driver.get(); }

const Driver &driver() {
  const detail::DriverLoad &l = loaded();
  if (!l.driver) [[unlikely]]
    throw NoGpuError("no CUDA driver: " + l.reason);
  return *l.driver;
}

std::string no_driver_reason() { return loaded().reason; }

std::string driver_status() {
  const Driver *d = try_driver();
  return d ? "CUDA driver " + cuda_version_string(d->version)
           : "no CUDA driver";
}

int driver_version() noexcept {
  const Driver *d = try_driver();
  return d ? d->version : 0;
}

std::string cuda_version_string(int version) {
  return fmt::format("{}.{}", version / 1000, version % 1000 / 10);
}

std::string error_name(CUresult r) { return name_with(try_driver(), r); }

std::string error_string(CUresult r) { return string_with(try_driver(), r); }

} // namespace tilejit::rt
