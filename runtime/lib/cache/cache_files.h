// cache_files.h - The disk side of the kernel cache: the entry file format,
// atomic writes, per-key locks. Internal to the runtime.
#pragma once

#include "tilejit/runtime/kernel_cache.h"

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace tilejit::rt::cache {

/// Layout under the cache directory (the version segment changes when the
/// format does, so old formats are never misread):
///   v1/entries/<digest>.tjk   one file per entry
///   v1/staging/               partial writes, renamed into entries/
///   v1/locks/<digest>.lock    per-key compile locks (flock)
///   v1/stats                  counters of all processes
std::string entries_dir(const std::string &root);
std::string staging_dir(const std::string &root);
std::string locks_dir(const std::string &root);
std::string entry_path(const std::string &root, const std::string &digest);

/// Entry file: a text header (magic, digest, kernel name, threads, blob
/// sizes and SHA-256s), then the key's canonical text, the PTX and the
/// cubin, then "end\n".
std::string serialize_entry(const CacheEntry &entry);
/// Parses and verifies an entry file; on failure returns nullopt and says
/// why in `why` (size, checksum, digest or format mismatch).
std::optional<CacheEntry> parse_entry(std::string_view bytes,
                                      const std::string &digest,
                                      std::string &why);

/// Reads a whole file; false if it cannot be opened.
bool read_file(const std::string &path, std::string &out);
/// Writes `bytes` to a unique name in `staging` and renames it to `path`;
/// `durable` also fsyncs the file before and the directory after the rename.
/// Returns "" or the error (strerror).
std::string atomic_write(const std::string &staging, const std::string &path,
                         bool durable, std::string_view bytes);
/// mkdir -p; returns "" or the error.
std::string make_dirs(const std::string &path);

/// An exclusive flock held for the object's lifetime; released by the kernel
/// if the process dies.
/// TILEJIT_LOCK_TIMEOUT_S (seconds, > 0), default 300.
double lock_timeout_s();

/// An exclusive flock on `path` that never waits silently or forever: after
/// `notice_s` of waiting it says once "waiting for pid N compiling WHAT"
/// (the holder writes its pid into the file), and after `timeout_s` it
/// gives up, says so, and is not locked() (the caller works without it;
/// entries are written atomically either way). A holder that died released
/// the lock already (flock). Messages go to `say` (default: stderr).
class FileLock {
public:
  using Say = std::function<void(const std::string &)>;
  explicit FileLock(const std::string &path, std::string_view what = "",
                    double timeout_s = lock_timeout_s(), double notice_s = 2.0,
                    Say say = nullptr);
  ~FileLock();
  FileLock(const FileLock &) = delete;
  FileLock &operator=(const FileLock &) = delete;
  bool locked() const { return fd_ >= 0; }

private:
  int fd_ = -1;
};

} // namespace tilejit::rt::cache
