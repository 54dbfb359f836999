// stream.h - Owning CUDA streams and the legacy default stream.
#pragma once

#include <cuda.h>

namespace tilejit::rt {

/// The legacy default stream (synchronises with all blocking streams of the
/// context). Every API taking a CUstream accepts it.
inline constexpr CUstream kDefaultStream = nullptr;

/// Waits until all work queued on `s` (kDefaultStream allowed) is done.
/// Throws DriverError, e.g. for a kernel that faulted earlier.
void synchronize(CUstream s);

/// An owned stream created with CU_STREAM_NON_BLOCKING on a device's primary
/// context; destroyed (without waiting, errors ignored) with the object.
/// Move-only; a moved-from Stream holds no stream and must not be used.
class Stream {
public:
  /// Creates a stream on device `device_ordinal` (UserError if out of range,
  /// NoGpuError without a driver).
  explicit Stream(int device_ordinal = 0);
  ~Stream();
  Stream(Stream &&other) noexcept;
  Stream &operator=(Stream &&other) noexcept;
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;

  CUstream handle() const { return stream_; }
  operator CUstream() const { return stream_; }

  /// Waits until all work queued on this stream is done.
  void synchronize() const;

private:
  void reset() noexcept;

  CUstream stream_ = nullptr;
  CUcontext context_ = nullptr;
};

} // namespace tilejit::rt
