// stream.cpp - Stream creation, destruction and synchronisation.
#include "tilejit/runtime/stream.h"

#include "scoped_context.h"
#include "tilejit/runtime/device.h"
#include "tilejit/runtime/driver.h"

#include <utility>

namespace tilejit::rt {

void synchronize(CUstream s) {
  ensure_context();
  TILEJIT_CU_CHECK(cuStreamSynchronize(s));
}

Stream::Stream(int device_ordinal) {
  const Device &dev = Device::get(device_ordinal);
  dev.make_current();
  TILEJIT_CU_CHECK(cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING));
  context_ = dev.context();
}

Stream::~Stream() { reset(); }

Stream::Stream(Stream &&other) noexcept
    : stream_(std::exchange(other.stream_, nullptr)),
      context_(std::exchange(other.context_, nullptr)) {}

Stream &Stream::operator=(Stream &&other) noexcept {
  if (this != &other) {
    reset();
    stream_ = std::exchange(other.stream_, nullptr);
    context_ = std::exchange(other.context_, nullptr);
  }
  return *this;
}

void Stream::synchronize() const {
  TILEJIT_CU_CHECK(cuStreamSynchronize(stream_));
}

void Stream::reset() noexcept {
  if (!stream_)
    return;
  if (const Driver *d = try_driver()) {
    detail::ScopedContext scope(d, context_);
    d->cuStreamDestroy(stream_);
  }
  stream_ = nullptr;
}

} // namespace tilejit::rt
