// scratch_dir.cpp - Temporary directories for child tools, swept after a
// process that died without removing its own.
#include "tilejit/runtime/scratch_dir.h"

#include "tilejit/error.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <mutex>
#include <unistd.h>
#include <vector>

namespace tilejit::rt {

namespace fs = std::filesystem;

static fs::path temp_root() {
  const char *tmp = std::getenv("TMPDIR");
  return tmp && *tmp ? fs::path(tmp) : fs::path("/tmp");
}

int sweep_scratch_dirs(const fs::path &dir, std::string_view what) {
  const std::string prefix =
      what.empty() ? std::string("tilejit-") : fmt::format("tilejit-{}-", what);
  int removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with(prefix))
      continue;
    // tilejit-<what>-<pid>-XXXXXX: the owner's pid, then mkdtemp's suffix
    // (with `what` empty: any tool's, a name of [a-z0-9_] first).
    std::string rest = name.substr(prefix.size());
    if (what.empty()) {
      const size_t tool =
          rest.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_");
      if (tool == 0 || tool == std::string::npos || rest[tool] != '-')
        continue;
      rest = rest.substr(tool + 1);
    }
    const size_t dash = rest.find('-');
    char *end_of_pid = nullptr;
    const long pid = std::strtol(rest.c_str(), &end_of_pid, 10);
    if (dash == std::string::npos || end_of_pid != rest.c_str() + dash ||
        pid <= 0)
      continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH)
      continue; // alive, or not ours to judge
    std::error_code remove_ec;
    if (fs::remove_all(it->path(), remove_ec) > 0)
      ++removed;
  }
  return removed;
}

ScratchDir::ScratchDir(std::string_view what) {
  const fs::path root = temp_root();
  {
    // Every tool's directories, once a process: a killed `--dump sass`
    // leaves tilejit-sass-*, which a later plain compile removes.
    static std::once_flag swept;
    std::call_once(swept, [&] { sweep_scratch_dirs(root, ""); });
  }
  std::string pattern = (root / fmt::format("tilejit-{}-{}-XXXXXX", what,
                                            static_cast<long>(::getpid())))
                            .string();
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data()))
    throw UserError(fmt::format("cannot create a temporary directory '{}': "
                                "{}; requires a writable TMPDIR",
                                pattern, std::strerror(errno)));
  path_ = buf.data();
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

fs::path ScratchDir::write(std::string_view name,
                           std::string_view bytes) const {
  const fs::path file = path_ / name;
  std::ofstream out(file, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.flush();
  if (!out)
    throw UserError(fmt::format("cannot write '{}' ({} bytes): {}; requires "
                                "space in TMPDIR",
                                file.string(), bytes.size(),
                                std::strerror(errno)));
  return file;
}

} // namespace tilejit::rt
