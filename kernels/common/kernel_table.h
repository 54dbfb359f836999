// kernel_table.h - The hot path of an op call: a lock-free lookup from a
// small POD key (the op's static parameters) to its loaded kernel. No
// string formatting, hashing of IR or locking on a hit.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <type_traits>

namespace tilejit::ops {

struct LoadedKernel;

/// Open addressing over `Capacity` atomic slots; entries are immutable once
/// published and live as long as the table (the process, for the static
/// tables of the ops). When full, lookups of new keys miss every time and the
/// caller's slow path (the shared cache) still answers correctly.
template <class Key, std::size_t Capacity = 256> class KernelTable {
  static_assert(std::has_unique_object_representations_v<Key>,
                "keys are compared bytewise: no padding, no floats");
  static_assert((Capacity & (Capacity - 1)) == 0, "Capacity: power of two");

public:
  KernelTable() = default;
  KernelTable(const KernelTable &) = delete;
  ~KernelTable() {
    for (auto &slot : slots_)
      delete slot.load(std::memory_order_relaxed);
  }

  const LoadedKernel *find(const Key &key) const noexcept {
    std::size_t h = hash(key);
    for (std::size_t i = 0; i < Capacity; ++i) {
      const Entry *e =
          slots_[(h + i) & (Capacity - 1)].load(std::memory_order_acquire);
      if (!e)
        return nullptr;
      if (std::memcmp(&e->key, &key, sizeof(Key)) == 0)
        return e->kernel;
    }
    return nullptr;
  }

  /// The kernel for `key`; on a miss calls `load()` (which must be
  /// thread-safe and return a kernel that outlives the table) and publishes it.
  template <class Load> const LoadedKernel &get(const Key &key, Load &&load) {
    if (const LoadedKernel *k = find(key))
      return *k;
    const LoadedKernel &loaded = load();
    insert(key, &loaded);
    return loaded;
  }

private:
  struct Entry {
    Key key;
    const LoadedKernel *kernel;
  };

  static std::size_t hash(const Key &key) noexcept {
    uint64_t h = 1469598103934665603ull; // FNV-1a
    const auto *p = reinterpret_cast<const unsigned char *>(&key);
    for (std::size_t i = 0; i < sizeof(Key); ++i)
      h = (h ^ p[i]) * 1099511628211ull;
    return static_cast<std::size_t>(h);
  }

  void insert(const Key &key, const LoadedKernel *kernel) {
    std::lock_guard<std::mutex> lock(insert_mutex_);
    if (find(key))
      return;
    std::size_t h = hash(key);
    for (std::size_t i = 0; i < Capacity; ++i) {
      auto &slot = slots_[(h + i) & (Capacity - 1)];
      if (!slot.load(std::memory_order_relaxed)) {
        slot.store(new Entry{key, kernel}, std::memory_order_release);
        return;
      }
    }
  }

  std::array<std::atomic<Entry *>, Capacity> slots_{};
  std::mutex insert_mutex_;
};

} // namespace tilejit::ops
