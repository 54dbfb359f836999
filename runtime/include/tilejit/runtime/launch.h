// launch.h - Kernel launch (cuLaunchKernelEx) and by-value ArgPack.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

namespace tilejit::rt {

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
};

struct LaunchConfig {
  Dim3 grid, block;
  /// Dynamic shared memory per block in bytes.
  uint32_t shared_bytes = 0;
  /// nullptr is the legacy default stream.
  CUstream stream = nullptr;
  /// A programmatic dependent launch (CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_
  /// STREAM_SERIALIZATION): the kernel may start before the one before it on
  /// the stream completes, and must wait for it itself (griddepcontrol.wait,
  /// KernelBuilder::programmatic_launch). Off when TILEJIT_PDL is 0.
  bool programmatic = false;
};

/// Launches `f` with cuLaunchKernelEx; `params` as cuLaunchKernel's
/// kernelParams (ArgPack::data()), may be null for a kernel without
/// parameters. Asynchronous: errors inside the kernel show up at the next
/// synchronisation.
/// - A grid with any dimension 0 launches nothing and needs no driver (empty
///   tensors).
/// - A block with 0 or more than 1024 threads, or a null `f`, throws
///   UserError (checked before the grid, so also for an empty grid).
/// - shared_bytes > 48 KiB first sets
///   CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES on `f` to shared_bytes.
/// - Makes device 0 current when the thread has no current context.
/// Driver failures throw DriverError naming the call and the configuration.
void launch(CUfunction f, const LaunchConfig &c, void **params);

/// Kernel parameters packed by value for launch(). Each push copies the value
/// into owned storage aligned to max(alignof(T), 16) whose address never
/// changes (not on later pushes, nor on a move of the ArgPack), and appends
/// that address to data(). Push in the order of the kernel's parameters, with
/// exactly the parameter's type (e.g. CUdeviceptr or a pointer for a pointer,
/// int32_t for .s32, CUtensorMap for a TMA descriptor). Move-only.
class ArgPack {
public:
  static constexpr std::size_t kMaxAlign = 128;

  ArgPack() = default;
  ArgPack(ArgPack &&other) noexcept
      : blocks_(std::move(other.blocks_)), used_(other.used_),
        capacity_(other.capacity_), pointers_(std::move(other.pointers_)) {
    other.clear();
  }
  ArgPack &operator=(ArgPack &&other) noexcept {
    if (this != &other) {
      blocks_ = std::move(other.blocks_);
      used_ = other.used_;
      capacity_ = other.capacity_;
      pointers_ = std::move(other.pointers_);
      other.clear();
    }
    return *this;
  }
  ArgPack(const ArgPack &) = delete;
  ArgPack &operator=(const ArgPack &) = delete;

  template <class T> void push(const T &value) {
    static_assert(std::is_trivially_copyable_v<T>,
                  "kernel parameters are copied by value: T must be "
                  "trivially copyable");
    static_assert(alignof(T) <= kMaxAlign,
                  "ArgPack supports parameter alignments up to 128 bytes");
    void *slot = allocate(sizeof(T), alignof(T));
    std::memcpy(slot, std::addressof(value), sizeof(T));
    pointers_.push_back(slot);
  }

  /// One pointer per pushed value, in push order; nullptr when empty.
  void **data() { return pointers_.empty() ? nullptr : pointers_.data(); }
  std::size_t size() const { return pointers_.size(); }
  bool empty() const { return pointers_.empty(); }
  /// Forgets all values; earlier data() pointers become invalid.
  void clear() noexcept;

private:
  struct FreeBlock {
    void operator()(std::byte *p) const noexcept {
      ::operator delete (p, std::align_val_t{kMaxAlign});
    }
  };
  using Block = std::unique_ptr<std::byte, FreeBlock>;

  void *allocate(std::size_t bytes, std::size_t align);

  std::vector<Block> blocks_;
  std::size_t used_ = 0;     // bytes used in blocks_.back()
  std::size_t capacity_ = 0; // size of blocks_.back()
  std::vector<void *> pointers_;
};

} // namespace tilejit::rt
