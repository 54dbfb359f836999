// device.cpp - Device lookup, primary-context retention and property queries.
#include "tilejit/runtime/device.h"

#include "tilejit/error.h"
#include "tilejit/runtime/driver.h"

#include <fmt/format.h>

#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace tilejit::rt {
namespace {

int attribute(CUdevice dev, CUdevice_attribute attr) {
  int value = 0;
  TILEJIT_CU_CHECK(cuDeviceGetAttribute(&value, attr, dev));
  return value;
}

} // namespace

int device_count() {
  if (!try_driver())
    return 0;
  int count = 0;
  TILEJIT_CU_CHECK(cuDeviceGetCount(&count));
  return count;
}

Device &Device::get(int ordinal) {
  static std::mutex mutex;
  // Leaked on purpose: devices outlive every static object that uses them.
  static auto *devices = new std::vector<std::unique_ptr<Device>>();

  driver(); // NoGpuError first, before any talk of ordinals.
  std::lock_guard lock(mutex);
  if (devices->empty())
    devices->resize(static_cast<std::size_t>(device_count()));
  int count = static_cast<int>(devices->size());
  if (ordinal < 0 || ordinal >= count)
    throw UserError(fmt::format(
        "CUDA device ordinal {} is out of range: this machine has {} CUDA "
        "device{}; the ordinal must be in [0, {})",
        ordinal, count, count == 1 ? "" : "s", count));
  auto &slot = (*devices)[static_cast<std::size_t>(ordinal)];
  if (!slot)
    slot.reset(new Device(ordinal));
  return *slot;
}

Device::Device(int ordinal) : ordinal_(ordinal) {
  TILEJIT_CU_CHECK(cuDeviceGet(&device_, ordinal));
  char name[256] = {};
  TILEJIT_CU_CHECK(cuDeviceGetName(name, sizeof(name) - 1, device_));
  name_ = name;
  sm_count_ = attribute(device_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  cc_major_ = attribute(device_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  cc_minor_ = attribute(device_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  smem_optin_ = static_cast<std::size_t>(attribute(
      device_, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN));
  l2_bytes_ = static_cast<std::size_t>(
      attribute(device_, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE));
  // Last, so that a failed property query leaks no context reference.
  TILEJIT_CU_CHECK(cuDevicePrimaryCtxRetain(&context_, device_));
}

void Device::make_current() const {
  CUcontext current = nullptr;
  TILEJIT_CU_CHECK(cuCtxGetCurrent(&current));
  if (current != context_)
    TILEJIT_CU_CHECK(cuCtxSetCurrent(context_));
}

int sm_count_of(CUstream stream) {
  ensure_context();
  CUcontext context = nullptr;
  TILEJIT_CU_CHECK(cuCtxGetCurrent(&context));
  static std::mutex mutex;
  static auto *known = new std::vector<std::pair<CUcontext, int>>();
  std::lock_guard lock(mutex);
  for (auto [c, n] : *known)
    if (c == context)
      return n;
  CUdevice device = 0;
  CUresult r = driver().cuStreamGetDevice(stream, &device);
  if (r == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
    return 0;
  check(r, "cuStreamGetDevice(stream, &device)");
  const int n = attribute(device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  known->emplace_back(context, n);
  return n;
}

void ensure_context() {
  CUcontext current = nullptr;
  TILEJIT_CU_CHECK(cuCtxGetCurrent(&current));
  if (!current)
    Device::get(0).make_current();
}

} // namespace tilejit::rt
