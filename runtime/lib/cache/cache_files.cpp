// cache_files.cpp - Entry file format, atomic writes and file locks.
#include "cache_files.h"

#include "tilejit/runtime/sha256.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <mutex>
#include <sys/file.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace tilejit::rt::cache {

static constexpr std::string_view kMagic = "tilejit-cache-entry 2\n";

std::string entries_dir(const std::string &root) {
  return root + "/v1/entries";
}
std::string staging_dir(const std::string &root) {
  return root + "/v1/staging";
}
std::string locks_dir(const std::string &root) { return root + "/v1/locks"; }
std::string entry_path(const std::string &root, const std::string &digest) {
  return entries_dir(root) + "/" + digest + ".tjk";
}

std::string serialize_entry(const CacheEntry &entry) {
  std::string key = entry.key.canonical();
  std::string_view cubin(entry.cubin.data(), entry.cubin.size());
  std::string out(kMagic);
  // The header's own lines are checksummed too: a flipped byte of the
  // kernel name or the thread count is a damaged entry, not another kernel.
  const std::string head =
      fmt::format("digest {}\nkernel {}\nthreads {}\n", sha256_hex(key),
                  entry.kernel_name, entry.threads);
  out += head;
  out += fmt::format("head {}\n", sha256_hex(head));
  out += fmt::format("key {} {}\n", key.size(), sha256_hex(key));
  out += fmt::format("ptx {} {}\n", entry.ptx.size(), sha256_hex(entry.ptx));
  out += fmt::format("cubin {} {}\n", cubin.size(), sha256_hex(cubin));
  out += fmt::format("abi {} {}\n", entry.abi.size(), sha256_hex(entry.abi));
  out += "data\n";
  out += key;
  out += entry.ptx;
  out.append(cubin);
  out += entry.abi;
  out += "end\n";
  return out;
}

namespace {
/// Reads "<word> <rest>\n" from the front of `text`.
bool take_line(std::string_view &text, std::string_view word,
               std::string_view &rest) {
  size_t nl = text.find('\n');
  if (nl == std::string_view::npos)
    return false;
  std::string_view line = text.substr(0, nl);
  text.remove_prefix(nl + 1);
  if (!line.starts_with(word) ||
      (line.size() > word.size() && line[word.size()] != ' '))
    return false;
  rest = line.size() > word.size() ? line.substr(word.size() + 1) : "";
  return true;
}

bool parse_blob(std::string_view rest, size_t &size, std::string &sha) {
  size_t sp = rest.find(' ');
  if (sp == std::string_view::npos)
    return false;
  try {
    size = std::stoull(std::string(rest.substr(0, sp)));
  } catch (...) {
    return false;
  }
  sha = rest.substr(sp + 1);
  return sha.size() == 64;
}
} // namespace

std::optional<CacheEntry> parse_entry(std::string_view bytes,
                                      const std::string &digest,
                                      std::string &why) {
  if (!bytes.starts_with(kMagic)) {
    why = "not a tilejit cache entry (bad magic)";
    return std::nullopt;
  }
  bytes.remove_prefix(kMagic.size());
  std::string_view rest;
  CacheEntry entry;
  const std::string_view head_start = bytes;
  constexpr int kBlobs = 4;
  size_t sizes[kBlobs];
  std::string shas[kBlobs];
  if (!take_line(bytes, "digest", rest) || rest != digest) {
    why = "the digest in the header differs from the file name";
    return std::nullopt;
  }
  if (!take_line(bytes, "kernel", rest)) {
    why = "no kernel line";
    return std::nullopt;
  }
  entry.kernel_name = rest;
  if (!take_line(bytes, "threads", rest)) {
    why = "no threads line";
    return std::nullopt;
  }
  entry.threads = std::atoi(std::string(rest).c_str());
  const std::string_view head =
      head_start.substr(0, head_start.size() - bytes.size());
  if (!take_line(bytes, "head", rest) || rest != sha256_hex(head)) {
    why = "header checksum mismatch";
    return std::nullopt;
  }
  const char *blobs[kBlobs] = {"key", "ptx", "cubin", "abi"};
  for (int i = 0; i < kBlobs; ++i)
    if (!take_line(bytes, blobs[i], rest) ||
        !parse_blob(rest, sizes[i], shas[i])) {
      why = fmt::format("malformed {} line", blobs[i]);
      return std::nullopt;
    }
  if (!take_line(bytes, "data", rest)) {
    why = "no data line";
    return std::nullopt;
  }
  const size_t data = sizes[0] + sizes[1] + sizes[2] + sizes[3] + 4;
  if (bytes.size() != data || !bytes.ends_with("end\n")) {
    why = fmt::format("truncated or oversized: {} data bytes, header says {}",
                      bytes.size(), data);
    return std::nullopt;
  }
  std::string_view parts[kBlobs];
  for (int i = 0; i < kBlobs; ++i) {
    parts[i] = bytes.substr(0, sizes[i]);
    bytes.remove_prefix(sizes[i]);
    if (sha256_hex(parts[i]) != shas[i]) {
      why = fmt::format("{} checksum mismatch", blobs[i]);
      return std::nullopt;
    }
  }
  if (sha256_hex(parts[0]) != digest) {
    why = "the key does not hash to the digest";
    return std::nullopt;
  }
  try {
    entry.key = SpecKey::parse(parts[0]);
  } catch (const std::exception &e) {
    why = e.what();
    return std::nullopt;
  }
  entry.ptx = parts[1];
  entry.cubin.assign(parts[2].begin(), parts[2].end());
  entry.abi = parts[3];
  return entry;
}

bool read_file(const std::string &path, std::string &out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    ::close(fd);
    return false;
  }
  out.resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::read(fd, out.data() + done, out.size() - done);
    if (n <= 0)
      break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(done);
  return true;
}

std::string make_dirs(const std::string &path) {
  std::string partial;
  for (size_t pos = 0; pos != std::string::npos;) {
    pos = path.find('/', pos + 1);
    partial = path.substr(0, pos);
    if (partial.empty())
      continue;
    if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST)
      return std::strerror(errno);
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return "not a directory";
  return "";
}

std::string atomic_write(const std::string &staging, const std::string &path,
                         bool durable, std::string_view bytes) {
  static std::atomic<uint64_t> counter{0};
  std::string tmp = fmt::format(
      "{}/{}.{}.{}.{}", staging, path.substr(path.rfind('/') + 1), getpid(),
      std::hash<std::thread::id>()(std::this_thread::get_id()), counter++);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    return std::strerror(errno);
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      std::string err = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return err;
    }
    done += static_cast<size_t>(n);
  }
  if ((durable && ::fsync(fd) != 0) || ::close(fd) != 0) {
    std::string err = std::strerror(errno);
    ::unlink(tmp.c_str());
    return err;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string err = std::strerror(errno);
    ::unlink(tmp.c_str());
    return err;
  }
  if (!durable)
    return "";
  std::string dir = path.substr(0, path.rfind('/'));
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return "";
}

double lock_timeout_s() {
  const char *env = std::getenv("TILEJIT_LOCK_TIMEOUT_S");
  if (!env || !*env)
    return 300;
  char *end = nullptr;
  const double v = std::strtod(env, &end);
  if (end && *end == '\0' && v > 0 && v < 1e9)
    return v;
  static std::once_flag warned;
  std::call_once(warned, [&] {
    std::fprintf(stderr,
                 "tilejit: warning: TILEJIT_LOCK_TIMEOUT_S='%s' is not a "
                 "positive number of seconds; using 300\n",
                 env);
  });
  return 300;
}

FileLock::FileLock(const std::string &path, std::string_view what,
                   double timeout_s, double notice_s, Say say) {
  if (!say)
    say = [](const std::string &line) {
      (void)std::fwrite(line.data(), 1, line.size(), stderr);
    };
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return;
  const auto start = std::chrono::steady_clock::now();
  bool noticed = false;
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR)
      continue;
    if (errno != EWOULDBLOCK) {
      ::close(fd);
      return;
    }
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    auto holder = [&] {
      char buf[32] = {};
      ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
      return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "?";
    };
    if (waited >= timeout_s) {
      say(fmt::format("tilejit: warning: pid {} has held the lock of {} for "
                      "{:.0f} s; going on without it "
                      "(TILEJIT_LOCK_TIMEOUT_S)\n",
                      holder(), what.empty() ? path : std::string(what),
                      waited));
      ::close(fd);
      return;
    }
    if (!noticed && waited >= notice_s) {
      noticed = true;
      say(fmt::format("tilejit: waiting for pid {} compiling {}\n", holder(),
                      what.empty() ? path : std::string(what)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // The holder's pid, for whoever waits.
  const std::string pid = std::to_string(static_cast<long>(::getpid()));
  if (::ftruncate(fd, 0) == 0)
    (void)::pwrite(fd, pid.data(), pid.size(), 0);
  fd_ = fd;
}

FileLock::~FileLock() {
  if (fd_ >= 0) {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
}

} // namespace tilejit::rt::cache
