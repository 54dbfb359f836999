// kernel_cache_test.cpp - The kernel cache: key stability and sensitivity,
// atomic writes, corruption, concurrency across threads and processes (also
// a process killed mid-compile), eviction, an unusable directory, bundles.
#include "churn_entry.h"
#include "common/jit.h"
#include "elementwise/scale_copy.h"
#include "op/typed_op.h"

#include "tilejit/error.h"
#include "tilejit/runtime/kernel_cache.h"
#include "tilejit/runtime/sha256.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <optional>
#include <random>
#include <set>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace tilejit;

namespace {
/// scale_copy's key for a spec, as the op's call computes it.
rt::SpecKey scale_copy_key(const elementwise::ScaleCopySpec &spec) {
  return ops::spec_key("scale_copy", spec);
}
} // namespace
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

/// A fresh, empty directory under /tmp, removed at scope exit.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("tilejit-cache-test-" + std::to_string(getpid()) + "-" +
            std::to_string(counter()++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  static std::atomic<int> &counter() {
    static std::atomic<int> c{0};
    return c;
  }
};

rt::CacheConfig config_in(const TempDir &dir, uint64_t max_bytes = 1 << 30) {
  rt::CacheConfig c;
  c.dir = dir.path.string();
  c.max_bytes = max_bytes;
  return c;
}

rt::SpecKey test_key(std::string variant) {
  rt::SpecKey k("test_op");
  k.add("variant", variant).add("dtype", "f32");
  return k;
}

rt::CacheEntry fake_entry(const rt::SpecKey &key, size_t ptx_bytes = 1000) {
  rt::CacheEntry e;
  e.key = key;
  e.kernel_name = "k";
  e.threads = 128;
  e.ptx = std::string(ptx_bytes, 'p') + key.get("variant");
  e.cubin = {'c', 'u', 'b', 'i', 'n'};
  return e;
}

fs::path entry_file(const TempDir &dir, const rt::SpecKey &key) {
  return dir.path / "v1" / "entries" / (key.digest() + ".tjk");
}

/// tilejit_cache_probe, beside this test binary (also in a packed build).
std::string probe_path() {
  return (fs::read_symlink("/proc/self/exe").parent_path() /
          "tilejit_cache_probe")
      .string();
}
#define TILEJIT_CACHE_PROBE probe_path()

/// Runs the probe with TILEJIT_CACHE_DIR=dir; returns its stdout.
std::string probe(const std::string &mode, const TempDir &dir) {
  std::string cmd = "TILEJIT_CACHE_DIR='" + dir.path.string() + "' '" +
                    TILEJIT_CACHE_PROBE + "' " + mode;
  FILE *p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::string out;
  char buf[256];
  while (fgets(buf, sizeof buf, p))
    out += buf;
  pclose(p);
  return out;
}

} // namespace

TEST_CASE("a key is the same for the same inputs, in every process",
          "[cache]") {
  rt::SpecKey a = scale_copy_key({});
  rt::SpecKey b = scale_copy_key({});
  CHECK(a == b);
  CHECK(a.digest() == b.digest());
  CHECK(a.digest().size() == 64);
  TempDir dir;
  CHECK(probe("key", dir) == a.digest() + "\n");
  CHECK(probe("key", dir) == a.digest() + "\n");
  // Field order does not matter: the canonical text sorts by name.
  rt::SpecKey x("op"), y("op");
  x.add("a", "1").add("b", "2");
  y.add("b", "2").add("a", "1");
  CHECK(x.canonical() == y.canonical());
  CHECK(rt::SpecKey::parse(x.canonical()) == x);
}

TEST_CASE("every component of a key changes it", "[cache]") {
  rt::SpecKey base = scale_copy_key({});
  std::set<std::string> digests = {base.digest()};
  for (const auto &[name, value] : base.fields()) {
    rt::SpecKey changed = base;
    changed.add(name, value + "x");
    INFO(name);
    CHECK(digests.insert(changed.digest()).second);
  }
  rt::SpecKey other_op("scale_copy2");
  for (const auto &[name, value] : base.fields())
    other_op.add(name, value);
  CHECK(digests.insert(other_op.digest()).second);

  // Each static parameter of the op is in its key.
  elementwise::ScaleCopySpec s;
  s.block_m = 64;
  CHECK(digests.insert(scale_copy_key(s).digest()).second);
  s = {};
  s.threads = 128;
  CHECK(digests.insert(scale_copy_key(s).digest()).second);
  s = {};
  s.dtype = DType::bf16;
  CHECK(digests.insert(scale_copy_key(s).digest()).second);

  // An environment variable that changes code is part of the key.
  setenv("TILEJIT_OPT_LEVEL", "1", 1);
  rt::SpecKey o1 = scale_copy_key({});
  unsetenv("TILEJIT_OPT_LEVEL");
  CHECK(o1.get("opt_level") == "1");
  CHECK(digests.insert(o1.digest()).second);
  CHECK(rt::key_differences(base, o1) ==
        std::vector<std::string>{"opt_level: 3 -> 1"});

  // So is who makes the cubin: ptxas (any executable will do for the key)
  // or the driver's linker.
  setenv("TILEJIT_PTXAS", "0", 1);
  rt::SpecKey by_driver = scale_copy_key({});
  setenv("TILEJIT_PTXAS", "/bin/sh", 1);
  rt::SpecKey by_ptxas = scale_copy_key({});
  unsetenv("TILEJIT_PTXAS");
  CHECK(by_driver.get("cubin") == "driver");
  CHECK(by_ptxas.get("cubin") == "ptxas");
  CHECK(rt::key_differences(by_ptxas, by_driver) ==
        std::vector<std::string>{"cubin: ptxas -> driver"});

  setenv("TILEJIT_OPT_LEVEL", "7", 1);
  std::string msg;
  try {
    scale_copy_key({});
  } catch (const UserError &e) {
    msg = e.what();
  }
  unsetenv("TILEJIT_OPT_LEVEL");
  CHECK(msg == "TILEJIT_OPT_LEVEL is '7'; requires 0, 1, 2 or 3");
}

TEST_CASE("memory, disk and compile are used in that order", "[cache]") {
  TempDir dir;
  int compiles = 0;
  auto compile = [&] {
    ++compiles;
    return fake_entry(test_key("a"));
  };
  {
    rt::KernelCache cache(config_in(dir));
    REQUIRE(cache.disk_usable());
    CHECK(cache.get_or_compile(test_key("a"), compile).source ==
          rt::CacheSource::compiled);
    CHECK(cache.get_or_compile(test_key("a"), compile).source ==
          rt::CacheSource::memory);
    CHECK(compiles == 1);
  }
  rt::KernelCache later(config_in(dir)); // a later process
  rt::CacheResult r = later.get_or_compile(test_key("a"), compile);
  CHECK(r.source == rt::CacheSource::disk);
  CHECK(compiles == 1);
  CHECK(r.entry->ptx == fake_entry(test_key("a")).ptx);
  CHECK(r.entry->cubin == fake_entry(test_key("a")).cubin);
  CHECK(later.persistent_stats().compiles == 1);
  CHECK(later.persistent_stats().disk_hits == 1);
}

TEST_CASE("a partial write in staging is never read", "[cache]") {
  TempDir dir;
  rt::KernelCache cache(config_in(dir));
  rt::SpecKey key = test_key("staged");
  // A writer that died before its rename leaves only a staged file.
  std::string full =
      std::string("tilejit-cache-entry 2\ndigest ") + key.digest();
  std::ofstream(dir.path / "v1" / "staging" / (key.digest() + ".tjk.123.1.0"))
      << full.substr(0, full.size() / 2);
  int compiles = 0;
  auto r = cache.get_or_compile(key, [&] {
    ++compiles;
    return fake_entry(key);
  });
  CHECK(r.source == rt::CacheSource::compiled);
  CHECK(compiles == 1);
}

TEST_CASE("a damaged entry is detected, recompiled and replaced", "[cache]") {
  TempDir dir;
  rt::SpecKey key = test_key("bitflip");
  {
    rt::KernelCache cache(config_in(dir));
    cache.get_or_compile(key, [&] { return fake_entry(key); });
  }
  for (int flip_from_end : {10, 500}) { // a byte of the cubin, of the PTX
    INFO(flip_from_end);
    {
      std::fstream f(entry_file(dir, key),
                     std::ios::in | std::ios::out | std::ios::binary);
      f.seekg(-flip_from_end, std::ios::end);
      char c = static_cast<char>(f.get());
      f.seekp(-flip_from_end, std::ios::end);
      f.put(static_cast<char>(c ^ 0x01));
    }
    rt::KernelCache cache(config_in(dir));
    int compiles = 0;
    auto r = cache.get_or_compile(key, [&] {
      ++compiles;
      return fake_entry(key);
    });
    CHECK(r.source == rt::CacheSource::compiled);
    CHECK(compiles == 1);
    CHECK(cache.in_process_stats().corrupt == 1);
    CHECK(r.entry->ptx == fake_entry(key).ptx);
    // The replacement is valid again.
    rt::KernelCache again(config_in(dir));
    CHECK(again.get_or_compile(key, [&] { return fake_entry(key); }).source ==
          rt::CacheSource::disk);
  }
  // A truncated file is damaged too.
  fs::resize_file(entry_file(dir, key), 100);
  rt::KernelCache cache(config_in(dir));
  CHECK(!cache.load(key.digest()).has_value());
  CHECK(cache.get_or_compile(key, [&] { return fake_entry(key); }).source ==
        rt::CacheSource::compiled);
}

TEST_CASE("threads asking for one missing key compile it once", "[cache]") {
  TempDir dir;
  rt::KernelCache cache(config_in(dir));
  std::atomic<int> compiles{0};
  std::vector<std::thread> threads;
  std::vector<std::string> ptx(8);
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      auto r = cache.get_or_compile(test_key("threads"), [&] {
        ++compiles;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        return fake_entry(test_key("threads"));
      });
      ptx[i] = r.entry->ptx;
    });
  for (auto &t : threads)
    t.join();
  CHECK(compiles == 1);
  for (const auto &p : ptx)
    CHECK(p == fake_entry(test_key("threads")).ptx);
}

TEST_CASE("8 processes asking for one key: one compile, 8 equal results",
          "[cache]") {
  TempDir dir;
  std::vector<FILE *> pipes;
  std::string cmd = "TILEJIT_CACHE_DIR='" + dir.path.string() + "' '" +
                    TILEJIT_CACHE_PROBE + "' compile";
  for (int i = 0; i < 8; ++i)
    pipes.push_back(popen(cmd.c_str(), "r"));
  int compiled = 0, disk = 0;
  std::set<std::string> hashes;
  for (FILE *p : pipes) {
    REQUIRE(p);
    char source[32] = {}, hash[80] = {};
    int fields = fscanf(p, "%31s %79s", source, hash);
    CHECK(pclose(p) == 0);
    REQUIRE(fields == 2);
    compiled += std::string(source) == "compiled";
    disk += std::string(source) == "disk";
    hashes.insert(hash);
  }
  CHECK(compiled == 1);
  CHECK(disk == 7);
  CHECK(hashes.size() == 1);
}

TEST_CASE("a process killed mid-compile does not block the key", "[cache]") {
  TempDir dir;
  std::string cmd = "exec env TILEJIT_CACHE_DIR='" + dir.path.string() + "' '" +
                    TILEJIT_CACHE_PROBE + "' hang";
  int out[2];
  REQUIRE(pipe(out) == 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    execl("/bin/sh", "sh", "-c", cmd.c_str(), nullptr);
    _exit(127);
  }
  close(out[1]);
  char buf[16] = {};
  REQUIRE(read(out[0], buf, 9) == 9); // "compiling": it holds the lock now
  CHECK(std::string(buf) == "compiling");
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  close(out[0]);
  CHECK(WIFSIGNALED(status));
  std::string result = probe("compile", dir);
  CHECK_THAT(result, Catch::Matchers::StartsWith("compiled "));
}

TEST_CASE("the oldest entries are evicted past the size bound", "[cache]") {
  TempDir dir;
  // Each fake entry is about 2.4 KB; the bound holds three of them.
  rt::KernelCache cache(config_in(dir, 8000));
  for (int i = 0; i < 3; ++i) {
    rt::SpecKey key = test_key("evict" + std::to_string(i));
    cache.get_or_compile(key, [&] { return fake_entry(key, 2000); });
    // Distinct ages, oldest first.
    struct timespec times[2] = {{1000000 + i * 10, 0}, {1000000 + i * 10, 0}};
    utimensat(AT_FDCWD, entry_file(dir, key).c_str(), times, 0);
  }
  CHECK(cache.list().size() == 3);
  rt::SpecKey newest = test_key("evict3");
  cache.get_or_compile(newest, [&] { return fake_entry(newest, 2000); });
  auto left = cache.list();
  CHECK(left.size() == 3);
  CHECK_FALSE(fs::exists(entry_file(dir, test_key("evict0"))));
  CHECK(fs::exists(entry_file(dir, test_key("evict1"))));
  CHECK(fs::exists(entry_file(dir, newest)));
}

TEST_CASE("an unusable directory degrades to memory only", "[cache]") {
  // /proc refuses new directories even to root: a read-only location.
  rt::CacheConfig c;
  c.dir = "/proc/tilejit-cache-test";
  rt::KernelCache cache(c);
  CHECK_FALSE(cache.disk_usable());
  int compiles = 0;
  auto compile = [&] {
    ++compiles;
    return fake_entry(test_key("ro"));
  };
  CHECK(cache.get_or_compile(test_key("ro"), compile).source ==
        rt::CacheSource::compiled);
  CHECK(cache.get_or_compile(test_key("ro"), compile).source ==
        rt::CacheSource::memory);
  CHECK(compiles == 1);

  TempDir dir; // a file where the directory should be
  std::ofstream(dir.path / "file") << "x";
  c.dir = (dir.path / "file" / "cache").string();
  CHECK_FALSE(rt::KernelCache(c).disk_usable());
}

TEST_CASE("a directory that cannot be written still serves its entries",
          "[cache]") {
  TempDir dir;
  {
    rt::KernelCache warm(config_in(dir));
    warm.get_or_compile(test_key("shipped"),
                        [] { return fake_entry(test_key("shipped")); });
  }
  // Writes fail (here: the staging area is a file; a read-only mount or a
  // full disk is the same), reads still work.
  std::filesystem::remove_all(dir.path / "v1" / "staging");
  std::ofstream(dir.path / "v1" / "staging") << "x";
  rt::KernelCache cache(config_in(dir));
  CHECK_FALSE(cache.disk_usable());
  CHECK_THAT(cache.disk_problem(), Catch::Matchers::Contains("is read-only"));
  int compiles = 0;
  auto r = cache.get_or_compile(test_key("shipped"), [&] {
    ++compiles;
    return fake_entry(test_key("shipped"));
  });
  CHECK(r.source == rt::CacheSource::disk);
  CHECK(compiles == 0);
  // A new key is compiled and kept in memory.
  CHECK(cache
            .get_or_compile(test_key("new"),
                            [] { return fake_entry(test_key("new")); })
            .source == rt::CacheSource::compiled);
  CHECK_FALSE(cache.load(test_key("new").digest()));
}

TEST_CASE("a stopped lock holder is waited for with a notice, then not",
          "[cache]") {
  TempDir dir;
  rt::KernelCache holder(config_in(dir)), waiter(config_in(dir));
  // stderr to a file, to read the notices.
  const std::string log = (dir.path / "stderr.log").string();
  std::fflush(stderr);
  const int saved = ::dup(2);
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ::dup2(fd, 2);
  ::close(fd);
  setenv("TILEJIT_LOCK_TIMEOUT_S", "2.5", 1);
  int compiles = 0;
  auto started = std::chrono::steady_clock::now();
  double waited = 0;
  // The holder compiles the key and, while it holds the key's lock (a
  // process stopped mid-compile), another cache asks for the same key.
  holder.get_or_compile(test_key("held"), [&] {
    ++compiles;
    auto t = std::chrono::steady_clock::now();
    waiter.get_or_compile(test_key("held"), [&] {
      ++compiles;
      return fake_entry(test_key("held"));
    });
    waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t)
                 .count();
    return fake_entry(test_key("held"));
  });
  unsetenv("TILEJIT_LOCK_TIMEOUT_S");
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  (void)started;
  std::ifstream in(log);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  CHECK(compiles == 2);
  CHECK(waited >= 2.5);
  CHECK(waited < 10);
  const std::string who = fmt::format("pid {} ", static_cast<long>(::getpid()));
  CHECK_THAT(text,
             Contains("tilejit: waiting for " + who + "compiling test_op ["));
  CHECK_THAT(text, Contains("tilejit: warning: " + who +
                            "has held the lock of test_op ["));
  CHECK_THAT(text, Contains("going on without it (TILEJIT_LOCK_TIMEOUT_S)"));
}

TEST_CASE("TILEJIT_CACHE=0 and TILEJIT_CACHE_MAX_MB are honoured", "[cache]") {
  setenv("TILEJIT_CACHE", "0", 1);
  setenv("TILEJIT_CACHE_MAX_MB", "5", 1);
  rt::CacheConfig c = rt::CacheConfig::from_env();
  unsetenv("TILEJIT_CACHE");
  unsetenv("TILEJIT_CACHE_MAX_MB");
  CHECK_FALSE(c.disk);
  CHECK(c.max_bytes == 5u << 20);
  CHECK_FALSE(rt::KernelCache(c).disk_usable());
}

TEST_CASE("a bundle carries the entries to another cache", "[cache]") {
  TempDir a, b;
  rt::KernelCache from(config_in(a));
  for (std::string v : {"x", "y"})
    from.get_or_compile(test_key(v), [&] { return fake_entry(test_key(v)); });
  std::string bundle = (a.path / "bundle.tjb").string();
  CHECK(from.write_bundle(bundle) == 2);
  rt::KernelCache to(config_in(b));
  CHECK(to.read_bundle(bundle) == 2);
  int compiles = 0;
  auto r = to.get_or_compile(test_key("y"), [&] {
    ++compiles;
    return fake_entry(test_key("y"));
  });
  CHECK(r.source == rt::CacheSource::disk);
  CHECK(compiles == 0);

  // A damaged bundle is refused whole.
  fs::resize_file(bundle, fs::file_size(bundle) - 3);
  TempDir c;
  rt::KernelCache none(config_in(c));
  std::string msg;
  try {
    none.read_bundle(bundle);
  } catch (const UserError &e) {
    msg = e.what();
  }
  CHECK_THAT(msg, Contains("cache import: '" + bundle + "'") &&
                      Contains("truncated or malformed after 1 entries"));
  CHECK(none.list().empty());
}

TEST_CASE("sha256 matches the FIPS 180-4 examples", "[cache]") {
  CHECK(rt::sha256_hex("abc") ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(rt::sha256_hex("") ==
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(rt::sha256_hex(
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // A million 'a's, fed in uneven pieces.
  rt::Sha256 h;
  std::string chunk(1000, 'a');
  for (int i = 0; i < 1000; ++i)
    h.update(chunk.data(), 999);
  h.update(chunk.data(), 1000);
  CHECK(h.hex() ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("an unusable directory is reported once, in one line", "[cache]") {
  std::string cmd = "TILEJIT_CACHE_DIR=/proc/tilejit-cache-test '" +
                    probe_path() + "' compile 2>&1";
  FILE *p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::vector<std::string> lines;
  char buf[512];
  while (fgets(buf, sizeof buf, p))
    lines.push_back(buf);
  CHECK(pclose(p) == 0);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "tilejit: warning: kernel cache directory "
                    "'/proc/tilejit-cache-test' is not usable (No such file "
                    "or directory); caching in memory only\n");
  CHECK_THAT(lines[1], Catch::Matchers::StartsWith("compiled "));
}

TEST_CASE("cache fault fuzzer: damaged entries are never served, and heal",
          "[cache][fuzz]") {
  // Random bit flips, truncations, deletions, appended bytes and garbage
  // in entry files and the stats file, each followed by a fresh cache (a new
  // process) asking for every key: what it serves is always the entry as
  // compiled, and afterwards the file on disk is whole again.
  TempDir dir;
  std::vector<rt::SpecKey> keys;
  for (std::string v : {"a", "b", "c"})
    keys.push_back(test_key(v));
  auto entry_for = [](const rt::SpecKey &key) {
    rt::CacheEntry e = fake_entry(key, 300);
    e.kernel_name = "kernel_" + key.get("variant");
    e.threads = 256;
    e.abi = "threads 256\nshared_bytes 0\narg tensor x f32 2\n";
    return e;
  };
  {
    rt::KernelCache warm(config_in(dir));
    for (const rt::SpecKey &k : keys)
      warm.get_or_compile(k, [&] { return entry_for(k); });
  }
  const uint64_t seed = std::random_device{}();
  std::mt19937_64 gen(seed);
  INFO("seed " << seed);
  const int kMutations = 400;
  int served_from_disk = 0, recompiled = 0;
  for (int i = 0; i < kMutations; ++i) {
    const rt::SpecKey &victim = keys[gen() % keys.size()];
    const fs::path file =
        (gen() % 10 == 0) ? dir.path / "v1" / "stats" : entry_file(dir, victim);
    std::string bytes;
    {
      std::ifstream in(file, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    const int kind = static_cast<int>(gen() % 5);
    if (kind == 0 && !bytes.empty()) { // flip a bit
      bytes[gen() % bytes.size()] ^= static_cast<char>(1u << (gen() % 8));
    } else if (kind == 1) { // truncate
      bytes.resize(bytes.empty() ? 0 : gen() % bytes.size());
    } else if (kind == 2) { // delete
      fs::remove(file);
      bytes.clear();
    } else if (kind == 3) { // append
      bytes += std::string(1 + gen() % 64, static_cast<char>(gen()));
    } else { // garbage
      bytes = std::string(gen() % 512, '\0');
      for (char &c : bytes)
        c = static_cast<char>(gen());
    }
    if (kind != 2)
      std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
    rt::KernelCache fresh(config_in(dir));
    for (const rt::SpecKey &k : keys) {
      const rt::CacheEntry want = entry_for(k);
      rt::CacheResult r;
      REQUIRE_NOTHROW(r = fresh.get_or_compile(k, [&] { return want; }));
      served_from_disk += r.source == rt::CacheSource::disk;
      recompiled += r.source == rt::CacheSource::compiled;
      CHECK(r.entry->kernel_name == want.kernel_name);
      CHECK(r.entry->threads == want.threads);
      CHECK(r.entry->ptx == want.ptx);
      CHECK(r.entry->cubin == want.cubin);
      CHECK(r.entry->abi == want.abi);
      // Healed: the file reads back whole.
      std::optional<rt::CacheEntry> disk = fresh.load(k.digest());
      REQUIRE(disk);
      CHECK(disk->ptx == want.ptx);
      CHECK(disk->kernel_name == want.kernel_name);
    }
  }
  CHECK(recompiled > 0);
  CHECK(served_from_disk > 0);
}

TEST_CASE("cache fault fuzzer: writers killed at random points, readers "
          "alongside",
          "[cache][fuzz]") {
  // Three reader processes read the churned keys from disk with fresh caches
  // (and ask for them, compiling a missing one) for three seconds, while
  // writer processes store new versions of random sizes and are killed with
  // SIGKILL after 1-40 ms, and entry files are damaged in place now and
  // then. No reader may ever be served an entry that no writer wrote; at the
  // end every key is served whole and its file heals.
  TempDir dir;
  const std::string env = "TILEJIT_CACHE_DIR='" + dir.path.string() + "' ";
  std::vector<FILE *> readers;
  for (int i = 0; i < 3; ++i)
    readers.push_back(
        popen((env + "'" + TILEJIT_CACHE_PROBE + "' read 3000").c_str(), "r"));
  const uint64_t seed = std::random_device{}();
  std::mt19937_64 gen(seed);
  INFO("seed " << seed);
  int kills = 0, damaged = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (std::chrono::steady_clock::now() < end) {
    const std::string cmd = "exec env " + env + "'" + TILEJIT_CACHE_PROBE +
                            "' churn " + std::to_string(gen() % 1000000);
    pid_t pid = fork();
    if (pid == 0) {
      execl("/bin/sh", "sh", "-c", cmd.c_str(), nullptr);
      _exit(127);
    }
    REQUIRE(pid > 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(1 + gen() % 40));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    kills += WIFSIGNALED(status);
    if (gen() % 3 == 0) { // damage an entry file in place
      const fs::path file = entry_file(dir, test::churn_key(gen() % 8));
      std::fstream f(file, std::ios::binary | std::ios::in | std::ios::out);
      if (f && fs::file_size(file) > 0) {
        f.seekp(static_cast<std::streamoff>(gen() % fs::file_size(file)));
        f.put(static_cast<char>(gen()));
        ++damaged;
      }
    }
  }
  int loaded = 0, compiled = 0, bad = 0;
  for (FILE *p : readers) {
    REQUIRE(p);
    int l = 0, c = 0, b = 0;
    const int fields = fscanf(p, "loaded %d compiled %d bad %d", &l, &c, &b);
    CHECK(pclose(p) == 0);
    REQUIRE(fields == 3);
    loaded += l;
    compiled += c;
    bad += b;
  }
  // Writes cut short by a kill stay in staging (swept after an hour).
  const auto cut_short =
      std::distance(fs::directory_iterator(dir.path / "v1" / "staging"),
                    fs::directory_iterator{});
  if (std::getenv("TILEJIT_FUZZ_VERBOSE"))
    fmt::print(stderr,
               "cache fuzzer: {} writers killed ({} mid-write), {} files "
               "damaged; readers loaded {} entries, compiled {}, {} bad\n",
               kills, cut_short, damaged, loaded, compiled, bad);
  CHECK(kills > 10);
  CHECK(loaded > 0);
  CHECK(bad == 0);
  rt::KernelCache fresh(config_in(dir));
  for (int i = 0; i < 8; ++i) {
    const rt::SpecKey key = test::churn_key(i);
    rt::CacheResult r =
        fresh.get_or_compile(key, [&] { return test::churn_entry(key, 3); });
    CHECK(test::churn_entry_ok(key, *r.entry));
    std::optional<rt::CacheEntry> disk = fresh.load(key.digest());
    REQUIRE(disk);
    CHECK(test::churn_entry_ok(key, *disk));
  }
}
