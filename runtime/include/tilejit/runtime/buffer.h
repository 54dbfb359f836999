// buffer.h - DeviceBuffer: an owned allocation of GPU memory.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>

namespace tilejit::rt {

class Device;

/// Owns `size()` bytes of memory on one device (cuMemAlloc, 256-byte
/// aligned); frees it in the destructor, ignoring errors. Move-only; a
/// moved-from buffer is empty (ptr 0, size 0).
///
/// Copies run on the legacy default stream: upload() and download() return
/// once the copy is done, copy_from() and fill_zero() may return earlier.
/// The legacy default stream does not wait for Streams created with
/// CU_STREAM_NON_BLOCKING (rt::Stream), so synchronize such a stream before
/// downloading what it wrote.
class DeviceBuffer {
public:
  /// An empty buffer: ptr 0, size 0.
  DeviceBuffer() = default;
  /// Allocates `bytes` on device `device_ordinal`, making it current.
  /// 0 bytes allocates nothing and needs no driver: ptr() is 0.
  /// Throws NoGpuError without a driver (bytes > 0), UserError for an
  /// ordinal out of range, DriverError when the allocation fails.
  explicit DeviceBuffer(std::size_t bytes, int device_ordinal = 0);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer &&other) noexcept;
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  CUdeviceptr ptr() const { return ptr_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  /// Copies `bytes` from host memory `src` to the start of the buffer.
  /// bytes == 0 does nothing (src may be null). Throws UserError when
  /// bytes > size() or src is null.
  void upload(const void *src, std::size_t bytes);
  /// Copies the first `bytes` of the buffer to host memory `dst`.
  /// bytes == 0 does nothing (dst may be null). Throws UserError when
  /// bytes > size() or dst is null.
  void download(void *dst, std::size_t bytes) const;
  /// Copies the first `bytes` of `src` to the start of this buffer (device to
  /// device), queued on `stream`. bytes == 0 does nothing. Throws UserError
  /// when bytes exceeds either buffer's size.
  void copy_from(const DeviceBuffer &src, std::size_t bytes,
                 CUstream stream = nullptr);
  /// Sets every byte to 0; nothing for an empty buffer.
  void fill_zero() { fill_bytes(0); }
  /// Sets every byte to `byte`; nothing for an empty buffer.
  void fill_bytes(uint8_t byte);

private:
  void release() noexcept;

  CUdeviceptr ptr_ = 0;
  std::size_t size_ = 0;
  const Device *device_ = nullptr; // null exactly when ptr_ == 0
};

} // namespace tilejit::rt
