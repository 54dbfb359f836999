// ptxas.cpp - Find ptxas, run it on a PTX text, choose it or the driver's
// JIT linker.
#include "tilejit/runtime/ptxas.h"
#include "tilejit/runtime/scratch_dir.h"

#include "tilejit/error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <spawn.h>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char **environ;

namespace tilejit::rt {
namespace {

bool executable_file(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         access(path.c_str(), X_OK) == 0;
}

std::string read_all(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// How a run of a program ended.
struct RunResult {
  /// Its exit status (128 + the signal that ended it), when known.
  int status = 0;
  /// False when another wait in this process collected the status (SIGCHLD
  /// ignored, or a waitpid(-1) elsewhere, as a host program's process pool
  /// may do): the program ran to its end, how it ended is lost.
  bool known = true;
  /// Why it could not be started (errno's text); empty when it ran.
  std::string not_started;
};

/// Runs `argv` with stdout and stderr to `log`, in the process's
/// environment. A spawn that fails for a passing reason is tried again, up
/// to 8 times, 1-16 ms apart: EAGAIN (too many processes at once), and
/// EFAULT, which is another thread changing the environment (setenv)
/// while the child reads it (a host program's threads do: the H200's
/// pytest run of 3212 cases saw it once or twice a run; 8 threads spawning
/// while one adds and removes variables without pause fail 100 of 320
/// spawns without the retry).
RunResult run_to_log(const std::vector<std::string> &argv,
                     const std::string &log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char *> args;
  for (const std::string &a : argv)
    args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = 0;
  for (int attempt = 0; attempt < 8; ++attempt) {
    rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
    if (rc != EAGAIN && rc != EFAULT)
      break;
    usleep(1000u << std::min(attempt, 4));
  }
  posix_spawn_file_actions_destroy(&actions);
  RunResult r;
  if (rc != 0) {
    r.not_started = std::strerror(rc);
    return r;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno == EINTR)
      continue;
    r.known = false; // ECHILD: collected by another wait, after it ended
    return r;
  }
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

} // namespace

std::optional<std::string> find_ptxas() {
  const char *env = std::getenv("TILEJIT_PTXAS");
  if (env && std::strcmp(env, "0") == 0)
    return std::nullopt;
  if (env && *env) {
    if (!executable_file(env))
      throw UserError(fmt::format(
          "TILEJIT_PTXAS is '{}', which is not an executable file; requires "
          "the path of ptxas, or 0 to make cubins with the driver's JIT "
          "linker",
          env));
    return std::string(env);
  }
  std::vector<std::string> dirs;
  for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *dir = std::getenv(var); dir && *dir)
      dirs.push_back(std::string(dir) + "/bin");
  if (const char *path = std::getenv("PATH")) {
    std::stringstream list(path);
    std::string dir;
    while (std::getline(list, dir, ':'))
      if (!dir.empty())
        dirs.push_back(dir);
  }
  dirs.push_back("/usr/local/cuda/bin");
  for (const std::string &dir : dirs)
    if (executable_file(dir + "/ptxas"))
      return dir + "/ptxas";
  return std::nullopt;
}

std::string cubin_maker() { return find_ptxas() ? "ptxas" : "driver"; }

std::string ptx_target(std::string_view ptx) {
  for (size_t at = ptx.find(".target"); at != std::string_view::npos;
       at = ptx.find(".target", at + 1)) {
    // A directive starts its line (after blanks), and is a whole word.
    size_t bol = ptx.rfind('\n', at);
    bol = bol == std::string_view::npos ? 0 : bol + 1;
    if (ptx.substr(bol, at - bol).find_first_not_of(" \t") !=
        std::string_view::npos)
      continue;
    size_t begin = ptx.find_first_not_of(" \t", at + 7);
    if (begin == at + 7 || begin == std::string_view::npos)
      continue;
    size_t end = ptx.find_first_of(" \t,\r\n", begin);
    return std::string(ptx.substr(begin, end - begin));
  }
  return "";
}

LinkResult compile_with_ptxas(const std::string &ptxas_path,
                              std::string_view ptx,
                              std::string_view name_for_messages) {
  auto start = std::chrono::steady_clock::now();
  std::string target = ptx_target(ptx);
  if (target.empty())
    throw UserError(fmt::format("ptxas: PTX '{}' has no .target directive; "
                                "requires one (e.g. '.target sm_90a')",
                                name_for_messages));
  ScratchDir dir("ptxas");
  std::filesystem::path in = dir.write("kernel.ptx", ptx);
  std::filesystem::path out = dir.path() / "kernel.cubin";
  std::filesystem::path log = dir.path() / "ptxas.log";
  const RunResult run = run_to_log(
      {ptxas_path, "-arch=" + target, "-O3", in.string(), "-o", out.string()},
      log.string());
  std::string output = read_all(log);
  auto failed = [&](const std::string &how) {
    return InternalError(fmt::format("ptxas '{}' failed for PTX '{}' ({}){}{}",
                                     ptxas_path, name_for_messages, how,
                                     output.empty() ? "" : ":\n", output));
  };
  if (!run.not_started.empty())
    throw failed("could not be started: " + run.not_started);
  if (run.known && run.status != 0)
    throw failed(fmt::format("exit status {}", run.status));
  // A status collected elsewhere: ptxas writes its cubin only when it
  // succeeds, so a cubin (read whole: ptxas has ended) is its success.
  std::string cubin = read_all(out);
  if (cubin.empty() && !run.known)
    throw failed("its exit status was collected by another wait in this "
                 "process, and it wrote no cubin");
  if (cubin.empty())
    throw InternalError(fmt::format("ptxas '{}' wrote no cubin for PTX '{}'",
                                    ptxas_path, name_for_messages));
  LinkResult result;
  result.cubin.assign(cubin.begin(), cubin.end());
  result.info_log = std::move(output);
  result.maker = "ptxas";
  result.wall_ms = std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  return result;
}

LinkResult ptx_to_cubin(std::string_view ptx,
                        std::string_view name_for_messages,
                        std::string_view maker) {
  if (maker == "ptxas")
    if (std::optional<std::string> ptxas = find_ptxas())
      return compile_with_ptxas(*ptxas, ptx, name_for_messages);
  return link_ptx(ptx, name_for_messages);
}

} // namespace tilejit::rt
