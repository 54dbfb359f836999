// device.h - CUDA devices: count, primary context, and properties read once.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <string>

namespace tilejit::rt {

/// Number of CUDA devices; 0 when there is no usable driver (never throws
/// NoGpuError). Throws DriverError if cuDeviceGetCount fails.
int device_count();

/// One GPU and its primary context, the context the CUDA runtime (and so
/// PyTorch) uses too, so tensors and kernels of both live in one context.
/// Devices live until the process exits; the primary context is retained on
/// first use and not released.
class Device {
public:
  /// The device with this ordinal, set up on first use (thread-safe).
  /// Throws NoGpuError without a driver, and UserError naming the ordinal and
  /// the device count when the ordinal is not in [0, device_count()).
  static Device &get(int ordinal = 0);

  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  /// Makes this device's primary context current on the calling thread; calls
  /// cuCtxSetCurrent only when another (or no) context is current.
  void make_current() const;

  int ordinal() const { return ordinal_; }
  CUdevice handle() const { return device_; }
  /// The retained primary context.
  CUcontext context() const { return context_; }
  /// E.g. "NVIDIA H200".
  const std::string &name() const { return name_; }
  int sm_count() const { return sm_count_; }
  int cc_major() const { return cc_major_; }
  int cc_minor() const { return cc_minor_; }
  /// Largest dynamic+static shared memory one block may opt in to, in bytes
  /// (232448 on Hopper).
  std::size_t max_shared_per_block_optin() const { return smem_optin_; }
  std::size_t l2_bytes() const { return l2_bytes_; }

private:
  explicit Device(int ordinal);

  int ordinal_ = 0;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  std::string name_;
  int sm_count_ = 0, cc_major_ = 0, cc_minor_ = 0;
  std::size_t smem_optin_ = 0, l2_bytes_ = 0;
};

/// Makes device 0 current when the calling thread has no current context;
/// leaves any current context alone. Used by calls that do not name a device.
void ensure_context();

/// The number of SMs of the device `stream` runs on (the current context's
/// device), remembered a context; 0 where it cannot be known: on a stream
/// being captured into a CUDA graph before any call outside a capture on
/// that context. For persistent kernels, which launch a block an SM.
int sm_count_of(CUstream stream);

} // namespace tilejit::rt
