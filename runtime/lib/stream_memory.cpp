// stream_memory.cpp - StreamMemory from a pool per device that keeps its
// memory (release threshold: all of it).
#include "tilejit/runtime/stream_memory.h"

#include "tilejit/error.h"
#include "tilejit/runtime/device.h"
#include "tilejit/runtime/driver.h"

#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <utility>

namespace tilejit::rt {
namespace {

/// tilejit's pool of the current context's device, made on first use
/// (the device asked of `stream`, which a stream being captured into a
/// CUDA graph does not answer: the first call on a device comes before).
CUmemoryPool pool_of(CUstream stream) {
  ensure_context();
  CUcontext context = nullptr;
  TILEJIT_CU_CHECK(cuCtxGetCurrent(&context));
  static std::mutex mutex;
  static std::map<CUcontext, CUmemoryPool> pools; // live as the process
  std::lock_guard lock(mutex);
  if (auto it = pools.find(context); it != pools.end())
    return it->second;
  CUdevice device = 0;
  if (CUresult r = driver().cuStreamGetDevice(stream, &device);
      r == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
    throw UserError("an op's scratch memory: its first call on a device is "
                    "inside a CUDA graph capture, where the device of the "
                    "stream cannot be asked; requires one call on the device "
                    "before capturing");
  else
    check(r, "cuStreamGetDevice(stream, &device)");
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = device;
  CUmemoryPool pool = nullptr;
  TILEJIT_CU_CHECK(cuMemPoolCreate(&pool, &props));
  // Freed memory stays in the pool across synchronisations: a call's
  // scratch is small and comes back on every call.
  uint64_t keep = std::numeric_limits<uint64_t>::max();
  TILEJIT_CU_CHECK(
      cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep));
  pools[context] = pool;
  return pool;
}

} // namespace

StreamMemory::StreamMemory(std::size_t bytes, CUstream stream)
    : stream_(stream) {
  if (bytes == 0)
    return;
  CUmemoryPool pool = pool_of(stream);
  TILEJIT_CU_CHECK(cuMemAllocFromPoolAsync(&ptr_, bytes, pool, stream));
  size_ = bytes;
}

StreamMemory::~StreamMemory() {
  if (ptr_ != 0)
    if (const Driver *d = try_driver())
      (void)d->cuMemFreeAsync(ptr_, stream_);
}

StreamMemory::StreamMemory(StreamMemory &&other) noexcept
    : ptr_(std::exchange(other.ptr_, 0)), size_(std::exchange(other.size_, 0)),
      stream_(other.stream_) {}

} // namespace tilejit::rt
