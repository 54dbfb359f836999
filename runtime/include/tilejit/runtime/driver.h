// driver.h - The CUDA driver, loaded with dlopen, and driver error checks.
#pragma once

#include <cuda.h>

#include <memory>
#include <string>

namespace tilejit::rt {

/// Entry points of the CUDA driver, one per line of cuda_functions.def. Each
/// member is typed `decltype(&::name)`, so it has the signature of the
/// versioned function cuda.h maps the name to (cuMemAlloc -> cuMemAlloc_v2);
/// the member itself is named after the versioned symbol too, which is
/// invisible to callers because they write the base name through the same
/// cuda.h macros: `driver().cuMemAlloc(&p, n)`.
/// A Driver returned by driver()/try_driver() has every member non-null and
/// cuInit(0) has succeeded.
struct Driver {
#define TILEJIT_CU_FN(name) decltype(&::name) name = nullptr;
#include "tilejit/runtime/cuda_functions.def"

  /// What cuDriverGetVersion reported, e.g. 13000 for CUDA 13.0.
  int version = 0;
};

/// The driver, loaded on first use from $TILEJIT_LIBCUDA or "libcuda.so.1".
/// The first call loads it (thread-safe, once per process); later calls,
/// including a change of $TILEJIT_LIBCUDA, see the same result.
/// Returns nullptr when the library is missing, lacks an entry point for
/// CUDA_VERSION, is older than CUDA_VERSION, or cuInit(0) fails.
const Driver *try_driver() noexcept;

/// Like try_driver(), but throws NoGpuError with one line,
/// "no CUDA driver: <reason>", when there is no usable driver.
const Driver &driver();

/// Why there is no usable driver (the <reason> of driver()'s message, one
/// line), or "" when the driver is loaded.
std::string no_driver_reason();

/// "CUDA driver 13.0" (the version the driver reports) or "no CUDA driver".
/// Never throws for a missing driver; used by `tilejit --version`.
std::string driver_status();

/// The driver's CUDA version (13000 for 13.0), or 0 when there is none.
int driver_version() noexcept;

/// "13.0" for 13000: a CUDA version as cuDriverGetVersion encodes it.
std::string cuda_version_string(int version);

/// The driver's name for `r` ("CUDA_ERROR_OUT_OF_MEMORY"), or "CUresult <n>"
/// when the code is unknown or no driver is loaded.
std::string error_name(CUresult r);

/// The driver's description of `r` ("out of memory"), or "unknown error".
std::string error_string(CUresult r);

namespace detail {
[[noreturn]] void throw_driver_error(CUresult r, const char *call);

/// Where the driver is loaded from: $TILEJIT_LIBCUDA when set and not empty,
/// else "libcuda.so.1".
std::string libcuda_path();

/// Result of one attempt to load the driver: `driver` set on success, else
/// `reason` says why in one line.
struct DriverLoad {
  std::unique_ptr<Driver> driver;
  std::string reason;
};

/// Loads the driver from `path` without caching (try_driver() calls this once
/// with libcuda_path()). On failure the library is closed again; on success it
/// stays open for the life of the process.
DriverLoad load_driver(const std::string &path) noexcept;
} // namespace detail

/// Does nothing for CUDA_SUCCESS; otherwise throws DriverError
/// "<call> failed: <cuGetErrorName> (<cuGetErrorString>)".
inline void check(CUresult r, const char *call) {
  if (r != CUDA_SUCCESS) [[unlikely]]
    detail::throw_driver_error(r, call);
}

} // namespace tilejit::rt

/// Makes a driver call through driver() and checks it. Write the call with its
/// plain C name: TILEJIT_CU_CHECK(cuMemAlloc(&p, bytes)) calls
/// driver().cuMemAlloc(&p, bytes) and on failure throws DriverError
/// "cuMemAlloc(&p, bytes) failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
/// Throws NoGpuError when there is no driver.
#define TILEJIT_CU_CHECK(call)                                                 \
  ::tilejit::rt::check(::tilejit::rt::driver().call, #call)
