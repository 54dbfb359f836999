// buffer.cpp - DeviceBuffer allocation, copies and zero fill.
#include "tilejit/runtime/buffer.h"

#include "scoped_context.h"
#include "tilejit/error.h"
#include "tilejit/runtime/device.h"
#include "tilejit/runtime/driver.h"

#include <fmt/format.h>

#include <utility>

namespace tilejit::rt {
namespace {

void check_fits(const char *what, std::size_t bytes, std::size_t size,
                const char *whose) {
  if (bytes > size)
    throw UserError(fmt::format("DeviceBuffer::{}: {} bytes exceed the {} "
                                "size of {} bytes; the byte count must be at "
                                "most the buffer size",
                                what, bytes, whose, size));
}

void check_host_pointer(const char *what, const void *p, std::size_t bytes,
                        const char *role) {
  if (!p)
    throw UserError(fmt::format("DeviceBuffer::{}: the {} pointer is null "
                                "for {} bytes; it must point at {} bytes of "
                                "host memory",
                                what, role, bytes, bytes));
}

} // namespace

DeviceBuffer::DeviceBuffer(std::size_t bytes, int device_ordinal) {
  if (bytes == 0)
    return;
  const Device &dev = Device::get(device_ordinal);
  dev.make_current();
  CUdeviceptr p = 0;
  TILEJIT_CU_CHECK(cuMemAlloc(&p, bytes));
  ptr_ = p;
  size_ = bytes;
  device_ = &dev;
}

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer &&other) noexcept
    : ptr_(std::exchange(other.ptr_, 0)), size_(std::exchange(other.size_, 0)),
      device_(std::exchange(other.device_, nullptr)) {}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&other) noexcept {
  if (this != &other) {
    release();
    ptr_ = std::exchange(other.ptr_, 0);
    size_ = std::exchange(other.size_, 0);
    device_ = std::exchange(other.device_, nullptr);
  }
  return *this;
}

void DeviceBuffer::release() noexcept {
  if (ptr_ && device_) {
    if (const Driver *d = try_driver()) {
      detail::ScopedContext scope(d, device_->context());
      d->cuMemFree(ptr_);
    }
  }
  ptr_ = 0;
  size_ = 0;
  device_ = nullptr;
}

void DeviceBuffer::upload(const void *src, std::size_t bytes) {
  check_fits("upload", bytes, size_, "buffer");
  if (bytes == 0)
    return;
  check_host_pointer("upload", src, bytes, "source");
  device_->make_current();
  TILEJIT_CU_CHECK(cuMemcpyHtoD(ptr_, src, bytes));
}

void DeviceBuffer::download(void *dst, std::size_t bytes) const {
  check_fits("download", bytes, size_, "buffer");
  if (bytes == 0)
    return;
  check_host_pointer("download", dst, bytes, "destination");
  device_->make_current();
  TILEJIT_CU_CHECK(cuMemcpyDtoH(dst, ptr_, bytes));
}

void DeviceBuffer::copy_from(const DeviceBuffer &src, std::size_t bytes,
                             CUstream stream) {
  check_fits("copy_from", bytes, src.size_, "source buffer");
  check_fits("copy_from", bytes, size_, "destination buffer");
  if (bytes == 0)
    return;
  device_->make_current();
  TILEJIT_CU_CHECK(cuMemcpyDtoDAsync(ptr_, src.ptr_, bytes, stream));
}

void DeviceBuffer::fill_bytes(uint8_t byte) {
  if (size_ == 0)
    return;
  device_->make_current();
  TILEJIT_CU_CHECK(cuMemsetD8(ptr_, byte, size_));
}

} // namespace tilejit::rt
