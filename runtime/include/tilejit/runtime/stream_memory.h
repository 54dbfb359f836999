// stream_memory.h - StreamMemory: device memory for the kernels of one call,
// ordered on its stream (an op's scratch between two of its kernels).
#pragma once

#include <cuda.h>

#include <cstddef>

namespace tilejit::rt {

/// `size()` bytes of `stream`'s device, allocated on `stream`
/// (cuMemAllocFromPoolAsync) and freed on it when this object dies
/// (cuMemFreeAsync): work queued on the stream in between may use it, work
/// queued after the free may not. The memory comes from a pool of tilejit's
/// per device that keeps what is freed for the next call (no trip to the
/// driver's allocator once warm). Inside a CUDA graph capture the
/// allocation and free become the graph's memory nodes. 0 bytes allocates
/// nothing (ptr 0). Throws DriverError when the allocation fails; move-only.
class StreamMemory {
public:
  StreamMemory(std::size_t bytes, CUstream stream);
  ~StreamMemory();
  StreamMemory(StreamMemory &&other) noexcept;
  StreamMemory &operator=(StreamMemory &&) = delete;
  StreamMemory(const StreamMemory &) = delete;
  StreamMemory &operator=(const StreamMemory &) = delete;

  CUdeviceptr ptr() const { return ptr_; }
  std::size_t size() const { return size_; }

private:
  CUdeviceptr ptr_ = 0;
  std::size_t size_ = 0;
  CUstream stream_ = nullptr;
};

} // namespace tilejit::rt
