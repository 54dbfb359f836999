// kernel_cache.h - Compiled kernels by specialisation key: in memory, and on
// disk across processes (atomic writes, checksums, per-key locks, eviction).
#pragma once

#include "tilejit/runtime/spec_key.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tilejit::rt {

/// Where and how much to cache. `from_env()` reads
///   TILEJIT_CACHE_DIR    directory (default $XDG_CACHE_HOME/tilejit, else
///                        ~/.cache/tilejit)
///   TILEJIT_CACHE=0      no disk cache (memory only)
///   TILEJIT_CACHE_MAX_MB size bound of the disk cache (default 2048)
struct CacheConfig {
  std::string dir;
  bool disk = true;
  uint64_t max_bytes = uint64_t{2048} << 20;
  static CacheConfig from_env();
};

/// What a compile produces and the cache keeps. `cubin` may be empty (a
/// machine without a driver caches PTX; the cubin is added on first link).
struct CacheEntry {
  SpecKey key;
  std::string kernel_name;
  int threads = 0;
  std::string ptx;
  std::vector<char> cubin;
  /// How to launch the kernel (tilejit::KernelAbi's text; opaque here).
  std::string abi;
};

enum class CacheSource { memory, disk, compiled };

struct CacheResult {
  std::shared_ptr<const CacheEntry> entry;
  CacheSource source = CacheSource::compiled;
};

/// Counters of this process (`in_process`) and of every process that used
/// the directory (`persistent`, kept in the directory; a process adds its
/// disk hits when its cache is destroyed, its compiles at once).
struct CacheStats {
  uint64_t memory_hits = 0, disk_hits = 0, compiles = 0, corrupt = 0;
  double compile_ms = 0;
};

/// One entry on disk, for `tilejit cache ls`.
struct DiskEntry {
  std::string digest;
  SpecKey key;
  uint64_t bytes = 0;
  double age_seconds = 0;
  bool has_cubin = false;
};

class KernelCache {
public:
  explicit KernelCache(CacheConfig config);
  ~KernelCache();
  KernelCache(const KernelCache &) = delete;
  KernelCache &operator=(const KernelCache &) = delete;

  /// The process-wide cache, configured from the environment on first use.
  static KernelCache &global();

  /// The entry for `key`: from memory, else from disk (verified), else from
  /// `compile`, which runs once per key across the threads of this process
  /// and, through a per-key file lock, across processes sharing the
  /// directory (a process killed mid-compile releases its lock). A bad or
  /// partial disk entry is recompiled and replaced, never returned.
  /// Exceptions from `compile` propagate and nothing is cached.
  CacheResult get_or_compile(const SpecKey &key,
                             const std::function<CacheEntry()> &compile);

  /// Replaces the entry of `entry.key` in memory and on disk (e.g. after
  /// its cubin was linked).
  void store(const CacheEntry &entry);

  /// Verified entry by digest from disk, or nullopt.
  std::optional<CacheEntry> load(const std::string &digest) const;
  std::vector<DiskEntry> list() const;
  /// Removes every entry; returns how many. UserError naming the first
  /// entry it could not remove (a read-only directory) when any is left.
  size_t clear();
  /// Drops the oldest entries until the directory holds at most max_bytes.
  void evict();

  /// Writes every valid entry into one bundle file (to ship a warm cache to
  /// another machine); returns how many. UserError if it cannot be written.
  size_t write_bundle(const std::string &path) const;
  /// Verifies and adds every entry of a bundle; returns how many were new
  /// (`present`: how many the directory held already). A damaged bundle or
  /// entry is a UserError naming it; nothing partial is added.
  size_t read_bundle(const std::string &path, size_t *present = nullptr);

  CacheStats in_process_stats() const;
  CacheStats persistent_stats() const;
  const CacheConfig &config() const { return config_; }
  /// False when entries cannot be written to the directory (then new ones
  /// are kept in memory; a read-only directory's entries are still read).
  bool disk_usable() const { return disk_ok_; }
  /// Why entries are not written to disk ("" while they are): the cache is
  /// off, the directory is read-only or not usable, or a write failed.
  std::string disk_problem() const;

private:
  struct Slot;
  Slot &slot_for(const std::string &digest);
  std::optional<CacheEntry> read_verified(const std::string &digest);
  void write_disk(const CacheEntry &entry, const std::string &digest);
  void disable_disk(const std::string &why);
  void set_problem(std::string why);
  void bump_persistent(const CacheStats &delta);
  void add_pending(const CacheStats &delta);
  void flush_persistent();

  CacheConfig config_;
  std::atomic<bool> disk_ok_{false};      ///< entries are written
  std::atomic<bool> disk_read_ok_{false}; ///< entries are read
  std::atomic<bool> warned_{false}; ///< the one "not usable" warning was given
  mutable std::mutex mutex_;
  std::string problem_; ///< disk_problem(), under mutex_
  std::unordered_map<std::string, std::unique_ptr<Slot>> slots_;
  CacheStats stats_;
  CacheStats pending_; ///< not yet added to the directory's counters
};

} // namespace tilejit::rt
