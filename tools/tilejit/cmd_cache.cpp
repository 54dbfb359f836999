// cmd_cache.cpp - `tilejit cache`: inspect, explain, fill, ship and clear the
// kernel cache (runtime/include/tilejit/runtime/kernel_cache.h).
#include "commands.h"
#include "options.h"
#include "output.h"
#include "suggest.h"

#include "common/jit.h"

#include "tilejit/error.h"
#include "tilejit/runtime/kernel_cache.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace tilejit::cli {

namespace {

rt::KernelCache &cache() { return rt::KernelCache::global(); }

std::string human_bytes(uint64_t b) {
  if (b >= (1u << 20))
    return fmt::format("{:.1f} MiB", b / 1048576.0);
  if (b >= 1024)
    return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{} B", b);
}

std::string human_age(double s) {
  if (s < 120)
    return fmt::format("{:.0f} s", s);
  if (s < 7200)
    return fmt::format("{:.0f} min", s / 60);
  if (s < 172800)
    return fmt::format("{:.0f} h", s / 3600);
  return fmt::format("{:.0f} d", s / 86400);
}

/// The fields that say what was specialised, without the fingerprint.
std::string params_of(const rt::SpecKey &key) {
  static const std::vector<std::string_view> fingerprint = {
      "tilejit", "build", "llvm", "chip", "features", "opt_level"};
  std::string out;
  for (const auto &[name, value] : key.fields())
    if (std::find(fingerprint.begin(), fingerprint.end(), name) ==
        fingerprint.end())
      out += fmt::format("{}{}={}", out.empty() ? "" : " ", name, value);
  return out;
}

void need_args(std::string_view verb, Args args, size_t n,
               std::string_view usage) {
  if (args.size() != n)
    throw UserError(
        fmt::format("tilejit cache {}: usage: tilejit cache {}", verb, usage));
}

int cache_ls(Args args) {
  need_args("ls", args, 0, "ls");
  auto entries = cache().list();
  // Columns as wide as their widest cell.
  size_t op_width = 2;
  for (const rt::DiskEntry &e : entries)
    op_width = std::max(op_width, e.key.op().size());
  fmt::print("{:<12} {:<{}} {:>10} {:>7} {:<5} {}\n", "digest", "op", op_width,
             "size", "age", "cubin", "parameters");
  for (const rt::DiskEntry &e : entries)
    fmt::print("{:<12} {:<{}} {:>10} {:>7} {:<5} {}\n", e.digest.substr(0, 12),
               e.key.op(), op_width, human_bytes(e.bytes),
               human_age(e.age_seconds), e.has_cubin ? "yes" : "no",
               params_of(e.key));
  fmt::print("{} in {}\n", counted(entries.size(), "entry", "entries"),
             cache().config().dir);
  return kOk;
}

int cache_stats(Args args) {
  need_args("stats", args, 0, "stats");
  uint64_t bytes = 0;
  auto entries = cache().list();
  for (const auto &e : entries)
    bytes += e.bytes;
  rt::CacheStats s = cache().persistent_stats();
  fmt::print("directory   {}\nentries     {} ({}; bound {})\n"
             "disk hits   {}\ncompiles    {} ({:.1f} ms in all)\n"
             "corrupt     {} (detected, recompiled)\n",
             cache().config().dir, entries.size(), human_bytes(bytes),
             human_bytes(cache().config().max_bytes), s.disk_hits, s.compiles,
             s.compile_ms, s.corrupt);
  return kOk;
}

int cache_clear(Args args) {
  need_args("clear", args, 0, "clear");
  const size_t removed = cache().clear();
  fmt::print("removed {} from {}\n", counted(removed, "entry", "entries"),
             cache().config().dir);
  return kOk;
}

int cache_explain(Args args) {
  OpCommand cmd = parse_op_command("cache explain", args,
                                   {"--shape", "--dtype", "--set", "--kernel"});
  rt::SpecKey key = key_of(cmd);
  std::string digest = key.digest();
  fmt::print("key {} of {}:\n", digest.substr(0, 12), cmd.op->name);
  for (const auto &[name, value] : key.fields())
    fmt::print("  {} = {}\n", name, value);
  if (auto entry = cache().load(digest)) {
    fmt::print("cached: yes, in {} ({}; cubin {})\n", cache().config().dir,
               entry->cubin.empty() ? "PTX only" : "PTX and cubin",
               entry->cubin.empty() ? "linked on first use" : "ready");
    return kOk;
  }
  // Not cached: name what differs from the nearest entry of the same op.
  const rt::DiskEntry *nearest = nullptr;
  std::vector<std::string> best;
  auto entries = cache().list();
  for (const rt::DiskEntry &e : entries) {
    if (e.key.op() != key.op())
      continue;
    auto diff = rt::key_differences(e.key, key);
    if (!nearest || diff.size() < best.size()) {
      nearest = &e;
      best = diff;
    }
  }
  if (!nearest) {
    fmt::print("cached: no; the cache in {} holds no entry of op '{}'\n",
               cache().config().dir, key.op());
    return kOk;
  }
  fmt::print("cached: no; the nearest entry, {}, differs in {} component{} "
             "(cached -> wanted):\n",
             nearest->digest.substr(0, 12), best.size(),
             best.size() == 1 ? "" : "s");
  for (const std::string &d : best)
    fmt::print("  {}\n", d);
  return kOk;
}

/// The specialisations a precompile list names, a line each; the file and
/// its lines are bounded (a list, not /dev/zero).
std::vector<std::pair<int, OpCommand>>
read_precompile_list(std::string_view path) {
  constexpr size_t kMaxBytes = 16 << 20, kMaxLine = 4096;
  std::ifstream file{std::string(path), std::ios::binary};
  if (!file)
    throw UserError(
        fmt::format("tilejit cache precompile: cannot read '{}'", path));
  std::string text(kMaxBytes + 1, '\0');
  file.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (file.bad()) // a directory opens, then cannot be read
    throw UserError(fmt::format("tilejit cache precompile: cannot read '{}' "
                                "({}); requires a list of specialisations, "
                                "one a line",
                                path, std::strerror(errno)));
  text.resize(static_cast<size_t>(file.gcount()));
  if (text.size() > kMaxBytes)
    throw UserError(fmt::format("tilejit cache precompile: '{}' is larger "
                                "than 16 MiB; requires a list of "
                                "specialisations, one a line",
                                path));
  std::vector<std::pair<int, OpCommand>> jobs;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (line.size() > kMaxLine)
      throw UserError(fmt::format("{}:{}: a line of {} characters; requires "
                                  "at most {}",
                                  path, number, line.size(), kMaxLine));
    std::istringstream words(line);
    std::vector<std::string> owned;
    for (std::string w; words >> w && w[0] != '#';)
      owned.push_back(w);
    if (owned.empty())
      continue;
    std::vector<std::string_view> view(owned.begin(), owned.end());
    try {
      jobs.emplace_back(number,
                        parse_op_command("cache precompile", view,
                                         {"--shape", "--dtype", "--set"}));
    } catch (const UserError &e) {
      throw UserError(fmt::format("{}:{}: {}", path, number, e.what()));
    }
  }
  return jobs;
}

int cache_precompile(Args args) {
  need_args("precompile", args, 1, "precompile FILE");
  const auto jobs = read_precompile_list(args[0]);
  std::atomic<size_t> next{0}, done{0}, compiled{0};
  std::mutex print;
  std::string failure;
  std::vector<std::vector<std::string>> digests(jobs.size()); // per kernel
  // A progress bar only where someone watches it; a log gets none.
  const bool progress = ::isatty(STDERR_FILENO) == 1;
  auto start = std::chrono::steady_clock::now();
  auto worker = [&] {
    for (size_t i; (i = next++) < jobs.size();) {
      const auto &[line, cmd] = jobs[i];
      // Nothing escapes a worker thread: every failure is reported.
      try {
        // Every kernel of the op; a line counts as compiled when any of
        // its kernels was.
        bool any = false;
        for (int k = 0; k < cmd.op->kernel_count; ++k) {
          const rt::SpecKey key = key_of(cmd, k);
          digests[i].push_back(key.digest());
          rt::CacheResult r =
              ops::compile_cached(key, [&] { return kernel_of(cmd, k); });
          any = any || r.source == rt::CacheSource::compiled;
        }
        compiled += any;
      } catch (const std::exception &e) {
        std::lock_guard<std::mutex> lock(print);
        if (failure.empty())
          failure = fmt::format("{}:{}: {}", args[0], line, e.what());
      }
      size_t n = ++done;
      if (progress) {
        std::lock_guard<std::mutex> lock(print);
        int bar = static_cast<int>(30 * n / jobs.size());
        print_err(fmt::format("\r[{:<30}] {}/{}", std::string(bar, '#'), n,
                              jobs.size()));
      }
    }
  };
  unsigned threads =
      std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(),
                                      static_cast<unsigned>(jobs.size())));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back(worker);
  for (auto &t : pool)
    t.join();
  std::chrono::duration<double, std::milli> ms =
      std::chrono::steady_clock::now() - start;
  if (progress)
    print_err("\n");
  if (!failure.empty())
    throw UserError(failure);
  // Success means stored: count the entries that are on disk now.
  std::vector<std::string> unique;
  for (const std::vector<std::string> &d : digests)
    unique.insert(unique.end(), d.begin(), d.end());
  std::sort(unique.begin(), unique.end());
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  size_t stored = 0;
  for (const std::string &d : unique)
    stored += cache().load(d).has_value();
  if (stored < unique.size()) {
    std::string why = cache().disk_problem();
    if (why.empty())
      why = fmt::format("evicted at once: the cache's size bound is {} MiB "
                        "(TILEJIT_CACHE_MAX_MB)",
                        cache().config().max_bytes >> 20);
    throw UserError(fmt::format("tilejit cache precompile: stored {} of {} "
                                "specialisations in '{}': {}",
                                stored, unique.size(), cache().config().dir,
                                why));
  }
  fmt::print("precompiled {} ({} compiled, {} already cached) in {:.0f} ms "
             "on {} into {}\n",
             counted(jobs.size(), "specialisation", "specialisations"),
             compiled.load(), jobs.size() - compiled.load(), ms.count(),
             counted(threads, "thread", "threads"), cache().config().dir);
  return kOk;
}

int cache_bundle(Args args) {
  need_args("bundle", args, 1, "bundle OUT_FILE");
  size_t n = cache().write_bundle(std::string(args[0]));
  fmt::print("bundled {} into {}\n", counted(n, "entry", "entries"), args[0]);
  return kOk;
}

int cache_import(Args args) {
  need_args("import", args, 1, "import BUNDLE_FILE");
  size_t present = 0;
  size_t n = cache().read_bundle(std::string(args[0]), &present);
  fmt::print("imported {} into {} ({} already there)\n",
             counted(n, "entry", "entries"), cache().config().dir, present);
  return kOk;
}

} // namespace

int cmd_cache(Args args) {
  struct Verb {
    std::string_view name;
    int (*run)(Args);
  };
  static constexpr Verb verbs[] = {
      {"dir", nullptr},           {"ls", cache_ls},
      {"stats", cache_stats},     {"clear", cache_clear},
      {"explain", cache_explain}, {"precompile", cache_precompile},
      {"bundle", cache_bundle},   {"import", cache_import}};
  std::vector<std::string_view> names;
  for (const Verb &v : verbs)
    names.push_back(v.name);
  std::string list = fmt::format("{}", fmt::join(names, ", "));
  if (args.empty())
    throw UserError(
        fmt::format("tilejit cache: missing subcommand; one of: {}", list));
  for (const Verb &v : verbs) {
    if (v.name != args[0])
      continue;
    if (!v.run) { // dir
      need_args("dir", args.subspan(1), 0, "dir");
      fmt::print("{}\n", cache().config().dir);
      return kOk;
    }
    return v.run(args.subspan(1));
  }
  throw UserError(fmt::format("tilejit cache: unknown subcommand '{}'{}; one "
                              "of: {}",
                              args[0], did_you_mean(args[0], names), list));
}

} // namespace tilejit::cli
