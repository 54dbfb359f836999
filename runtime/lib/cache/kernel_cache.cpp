// kernel_cache.cpp - Memory and disk cache of compiled kernels by key.
#include "tilejit/runtime/kernel_cache.h"

#include "cache_files.h"

#include "tilejit/error.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tilejit::rt {

using namespace cache;

CacheConfig CacheConfig::from_env() {
  CacheConfig c;
  if (const char *dir = std::getenv("TILEJIT_CACHE_DIR"); dir && *dir)
    c.dir = dir;
  else if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    c.dir = fmt::format("{}/tilejit", xdg);
  else if (const char *home = std::getenv("HOME"); home && *home)
    c.dir = fmt::format("{}/.cache/tilejit", home);
  if (const char *on = std::getenv("TILEJIT_CACHE");
      on && std::strcmp(on, "0") == 0)
    c.disk = false;
  if (const char *mb = std::getenv("TILEJIT_CACHE_MAX_MB"); mb && *mb) {
    char *end = nullptr;
    unsigned long long v = std::strtoull(mb, &end, 10);
    if (end && *end == '\0')
      c.max_bytes = static_cast<uint64_t>(v) << 20;
    else
      std::fprintf(stderr,
                   "tilejit: warning: TILEJIT_CACHE_MAX_MB='%s' is not a "
                   "whole number of MiB; using %llu\n",
                   mb, static_cast<unsigned long long>(c.max_bytes >> 20));
  }
  if (c.dir.empty())
    c.disk = false;
  return c;
}

/// One key's compile: the first thread compiles, the others wait on `once`.
struct KernelCache::Slot {
  std::once_flag once;
  std::atomic<std::shared_ptr<const CacheEntry>> entry;
};

KernelCache::KernelCache(CacheConfig config) : config_(std::move(config)) {
  if (!config_.disk) {
    set_problem("the disk cache is off (TILEJIT_CACHE=0, or no directory)");
    return;
  }
  for (const std::string &dir :
       {entries_dir(config_.dir), staging_dir(config_.dir),
        locks_dir(config_.dir)}) {
    std::string err = make_dirs(dir);
    if (err.empty() && ::access(dir.c_str(), W_OK) != 0)
      err = std::strerror(errno);
    if (err.empty())
      continue;
    // Entries that can be read still serve hits (a warm cache shipped in a
    // read-only layer); only writes stay in memory.
    if (::access(entries_dir(config_.dir).c_str(), R_OK | X_OK) == 0) {
      disk_read_ok_ = true;
      set_problem(fmt::format("'{}' is read-only ({})", config_.dir, err));
      if (!warned_.exchange(true))
        std::fprintf(stderr,
                     "tilejit: warning: kernel cache directory '%s' is "
                     "read-only (%s); its entries are used, new ones are "
                     "kept in memory only\n",
                     config_.dir.c_str(), err.c_str());
      return;
    }
    disable_disk(err);
    return;
  }
  disk_ok_ = true;
  disk_read_ok_ = true;
}

void KernelCache::set_problem(std::string why) {
  std::lock_guard<std::mutex> lock(mutex_);
  problem_ = std::move(why);
}

std::string KernelCache::disk_problem() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return problem_;
}

KernelCache::~KernelCache() { flush_persistent(); }

KernelCache &KernelCache::global() {
  static KernelCache cache(CacheConfig::from_env());
  return cache;
}

void KernelCache::disable_disk(const std::string &why) {
  // Called when the directory cannot be set up or a write fails: either way
  // one warning per cache, from one thread.
  disk_ok_ = false;
  set_problem(fmt::format("'{}' is not usable ({})", config_.dir, why));
  if (!warned_.exchange(true))
    std::fprintf(stderr,
                 "tilejit: warning: kernel cache directory '%s' is not usable "
                 "(%s); caching in memory only\n",
                 config_.dir.c_str(), why.c_str());
}

KernelCache::Slot &KernelCache::slot_for(const std::string &digest) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto &slot = slots_[digest];
  if (!slot)
    slot = std::make_unique<Slot>();
  return *slot;
}

std::optional<CacheEntry>
KernelCache::read_verified(const std::string &digest) {
  std::string bytes, why;
  std::string path = entry_path(config_.dir, digest);
  if (!read_file(path, bytes))
    return std::nullopt;
  std::optional<CacheEntry> entry = parse_entry(bytes, digest, why);
  if (!entry) {
    std::fprintf(stderr,
                 "tilejit: warning: cache entry %s is damaged (%s); it will "
                 "be recompiled\n",
                 path.c_str(), why.c_str());
    ::unlink(path.c_str());
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++stats_.corrupt;
    }
    CacheStats delta;
    delta.corrupt = 1;
    add_pending(delta);
    return std::nullopt;
  }
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0); // LRU: touch on use
  return entry;
}

void KernelCache::write_disk(const CacheEntry &entry,
                             const std::string &digest) {
  if (!disk_ok_)
    return;
  std::string err =
      atomic_write(staging_dir(config_.dir), entry_path(config_.dir, digest),
                   /*durable=*/true, serialize_entry(entry));
  if (!err.empty())
    return disable_disk(err);
  evict();
}

CacheResult
KernelCache::get_or_compile(const SpecKey &key,
                            const std::function<CacheEntry()> &compile) {
  std::string digest = key.digest();
  Slot &slot = slot_for(digest);
  CacheSource source = CacheSource::memory;
  bool ran = false;
  double compile_ms = 0;
  std::call_once(slot.once, [&] {
    ran = true;
    // Another process may be compiling this key: take its lock, then look.
    std::optional<FileLock> lock;
    if (disk_read_ok_) {
      if (auto hit = read_verified(digest); hit && hit->key == key) {
        slot.entry = std::make_shared<const CacheEntry>(std::move(*hit));
        source = CacheSource::disk;
        return;
      }
    }
    if (disk_ok_) {
      lock.emplace(locks_dir(config_.dir) + "/" + digest + ".lock",
                   fmt::format("{} [{}]", key.op(), digest.substr(0, 12)));
      if (auto hit = read_verified(digest); hit && hit->key == key) {
        slot.entry = std::make_shared<const CacheEntry>(std::move(*hit));
        source = CacheSource::disk;
        return;
      }
    }
    auto start = std::chrono::steady_clock::now();
    CacheEntry fresh = compile();
    std::chrono::duration<double, std::milli> ms =
        std::chrono::steady_clock::now() - start;
    compile_ms = ms.count();
    fresh.key = key;
    write_disk(fresh, digest);
    slot.entry = std::make_shared<const CacheEntry>(std::move(fresh));
    source = CacheSource::compiled;
  });
  CacheStats delta;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (!ran) {
      ++stats_.memory_hits;
    } else if (source == CacheSource::disk) {
      ++stats_.disk_hits;
      delta.disk_hits = 1;
    } else {
      ++stats_.compiles;
      stats_.compile_ms += compile_ms;
      delta.compiles = 1;
      delta.compile_ms = compile_ms;
    }
  }
  if (ran && source == CacheSource::compiled)
    bump_persistent(delta); // a compile is slow anyway: record it now
  else if (ran)
    add_pending(delta); // a disk hit stays cheap: recorded at exit
  return {slot.entry.load(), ran ? source : CacheSource::memory};
}

void KernelCache::store(const CacheEntry &entry) {
  std::string digest = entry.key.digest();
  auto shared = std::make_shared<const CacheEntry>(entry);
  write_disk(entry, digest);
  Slot &slot = slot_for(digest);
  std::call_once(slot.once, [] {});
  slot.entry = shared;
}

std::optional<CacheEntry> KernelCache::load(const std::string &digest) const {
  std::string bytes, why;
  if (!config_.disk || !read_file(entry_path(config_.dir, digest), bytes))
    return std::nullopt;
  return parse_entry(bytes, digest, why);
}

std::vector<DiskEntry> KernelCache::list() const {
  std::vector<DiskEntry> out;
  if (!config_.disk)
    return out;
  std::string dir = entries_dir(config_.dir);
  DIR *d = ::opendir(dir.c_str());
  if (!d)
    return out;
  auto now = std::chrono::system_clock::now();
  while (dirent *e = ::readdir(d)) {
    std::string name = e->d_name;
    if (!name.ends_with(".tjk"))
      continue;
    DiskEntry entry;
    entry.digest = name.substr(0, name.size() - 4);
    struct stat st;
    if (::stat((dir + "/" + name).c_str(), &st) != 0)
      continue;
    entry.bytes = static_cast<uint64_t>(st.st_size);
    auto mtime = std::chrono::system_clock::from_time_t(st.st_mtime);
    entry.age_seconds = std::chrono::duration<double>(now - mtime).count();
    if (auto parsed = load(entry.digest)) {
      entry.key = parsed->key;
      entry.has_cubin = !parsed->cubin.empty();
    } else {
      entry.key = SpecKey("<damaged>");
    }
    out.push_back(std::move(entry));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end(), [](const DiskEntry &a, const DiskEntry &b) {
    return a.age_seconds < b.age_seconds;
  });
  return out;
}

size_t KernelCache::clear() {
  size_t n = 0;
  std::string failed;
  for (const DiskEntry &e : list()) {
    const std::string path = entry_path(config_.dir, e.digest);
    if (::unlink(path.c_str()) == 0)
      ++n;
    else if (failed.empty())
      failed = fmt::format("{}: {}", path, std::strerror(errno));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  slots_.clear();
  if (!failed.empty())
    throw UserError(fmt::format("cache clear: removed {} {} from {}; could "
                                "not remove the others ({})",
                                n, n == 1 ? "entry" : "entries", config_.dir,
                                failed));
  return n;
}

void KernelCache::evict() {
  if (!disk_ok_)
    return;
  std::string dir = entries_dir(config_.dir);
  struct File {
    std::string path;
    uint64_t bytes;
    timespec mtime;
  };
  std::vector<File> files;
  uint64_t total = 0;
  if (DIR *d = ::opendir(dir.c_str())) {
    while (dirent *e = ::readdir(d)) {
      std::string name = e->d_name;
      struct stat st;
      if (!name.ends_with(".tjk") ||
          ::stat((dir + "/" + name).c_str(), &st) != 0)
        continue;
      files.push_back(
          {dir + "/" + name, static_cast<uint64_t>(st.st_size), st.st_mtim});
      total += static_cast<uint64_t>(st.st_size);
    }
    ::closedir(d);
  }
  // Staged files older than an hour belong to processes that died.
  std::string staging = staging_dir(config_.dir);
  if (DIR *d = ::opendir(staging.c_str())) {
    time_t now = ::time(nullptr);
    while (dirent *e = ::readdir(d)) {
      std::string path = staging + "/" + e->d_name;
      struct stat st;
      if (e->d_name[0] != '.' && ::stat(path.c_str(), &st) == 0 &&
          now - st.st_mtime > 3600)
        ::unlink(path.c_str());
    }
    ::closedir(d);
  }
  if (total <= config_.max_bytes)
    return;
  std::sort(files.begin(), files.end(), [](const File &a, const File &b) {
    return a.mtime.tv_sec != b.mtime.tv_sec ? a.mtime.tv_sec < b.mtime.tv_sec
                                            : a.mtime.tv_nsec < b.mtime.tv_nsec;
  });
  for (const File &f : files) {
    if (total <= config_.max_bytes)
      break;
    if (::unlink(f.path.c_str()) == 0)
      total -= f.bytes;
  }
}

static constexpr std::string_view kBundleMagic = "tilejit-bundle 1\n";

/// What a path that is not a regular file is, for a message.
static const char *file_kind(mode_t mode) {
  if (S_ISLNK(mode))
    return "a symbolic link";
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISCHR(mode) || S_ISBLK(mode))
    return "a device";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

size_t KernelCache::write_bundle(const std::string &path) const {
  // The bundle replaces `path` by a rename: never a device, a link (it
  // would be replaced, its target left alone) or anything but a file.
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw UserError(fmt::format("cache bundle: '{}' is {}; requires a new "
                                "file or a regular file to replace",
                                path, file_kind(st.st_mode)));
  std::string out(kBundleMagic);
  size_t n = 0;
  for (const DiskEntry &e : list()) {
    std::string bytes, why;
    if (!read_file(entry_path(config_.dir, e.digest), bytes) ||
        !parse_entry(bytes, e.digest, why))
      continue;
    out += fmt::format("entry {} {}\n", e.digest, bytes.size());
    out += bytes;
    ++n;
  }
  std::string dir = path.find('/') == std::string::npos
                        ? "."
                        : path.substr(0, path.rfind('/'));
  std::string err = atomic_write(dir, path, /*durable=*/true, out);
  if (!err.empty())
    throw UserError(
        fmt::format("cache bundle: cannot write '{}': {}", path, err));
  return n;
}

size_t KernelCache::read_bundle(const std::string &path, size_t *present) {
  std::string bytes;
  if (!read_file(path, bytes))
    throw UserError(fmt::format("cache import: cannot read '{}'", path));
  if (!disk_ok_)
    throw UserError(fmt::format("cache import: the cache directory '{}' is "
                                "not usable",
                                config_.dir));
  std::string_view rest(bytes);
  if (!rest.starts_with(kBundleMagic))
    throw UserError(
        fmt::format("cache import: '{}' is not a tilejit bundle", path));
  rest.remove_prefix(kBundleMagic.size());
  std::vector<std::pair<std::string, std::string_view>> entries;
  while (!rest.empty()) {
    size_t nl = rest.find('\n');
    char digest[65] = {};
    unsigned long long size = 0;
    if (nl == std::string_view::npos ||
        std::sscanf(std::string(rest.substr(0, nl)).c_str(), "entry %64s %llu",
                    digest, &size) != 2 ||
        rest.size() - nl - 1 < size)
      throw UserError(fmt::format("cache import: '{}' is truncated or "
                                  "malformed after {} entries",
                                  path, entries.size()));
    std::string_view entry = rest.substr(nl + 1, size);
    std::string why;
    if (!parse_entry(entry, digest, why))
      throw UserError(fmt::format("cache import: entry {} of '{}' is "
                                  "damaged ({})",
                                  digest, path, why));
    entries.emplace_back(digest, entry);
    rest.remove_prefix(nl + 1 + size);
  }
  size_t added = 0;
  if (present)
    *present = 0;
  for (const auto &[digest, entry] : entries) {
    std::string have;
    if (read_file(entry_path(config_.dir, digest), have) && have == entry) {
      if (present)
        ++*present;
      continue;
    }
    ++added;
    std::string err =
        atomic_write(staging_dir(config_.dir), entry_path(config_.dir, digest),
                     /*durable=*/true, entry);
    if (!err.empty())
      throw UserError(
          fmt::format("cache import: cannot write entry {}: {}", digest, err));
  }
  return added;
}

CacheStats KernelCache::in_process_stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

static CacheStats parse_stats(const std::string &text) {
  CacheStats s;
  std::sscanf(text.c_str(),
              "disk_hits %lu\ncompiles %lu\ncorrupt %lu\ncompile_ms %lf",
              &s.disk_hits, &s.compiles, &s.corrupt, &s.compile_ms);
  return s;
}

CacheStats KernelCache::persistent_stats() const {
  const_cast<KernelCache *>(this)->flush_persistent();
  std::string text;
  if (!config_.disk || !read_file(config_.dir + "/v1/stats", text))
    return {};
  return parse_stats(text);
}

void KernelCache::add_pending(const CacheStats &delta) {
  std::lock_guard<std::mutex> lock(mutex_);
  pending_.disk_hits += delta.disk_hits;
  pending_.compiles += delta.compiles;
  pending_.corrupt += delta.corrupt;
  pending_.compile_ms += delta.compile_ms;
}

void KernelCache::flush_persistent() {
  CacheStats pending;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pending = pending_;
    pending_ = {};
  }
  if (pending.disk_hits || pending.compiles || pending.corrupt)
    bump_persistent(pending);
}

void KernelCache::bump_persistent(const CacheStats &delta) {
  if (!disk_ok_)
    return;
  FileLock lock(locks_dir(config_.dir) + "/stats.lock");
  std::string text;
  read_file(config_.dir + "/v1/stats", text);
  CacheStats s = parse_stats(text);
  s.disk_hits += delta.disk_hits;
  s.compiles += delta.compiles;
  s.compile_ms += delta.compile_ms;
  s.corrupt += delta.corrupt;
  atomic_write(staging_dir(config_.dir), config_.dir + "/v1/stats",
               /*durable=*/false,
               fmt::format("disk_hits {}\ncompiles {}\ncorrupt {}\n"
                           "compile_ms {:.3f}\n",
                           s.disk_hits, s.compiles, s.corrupt, s.compile_ms));
}

} // namespace tilejit::rt
