// main.cpp - The tilejit command line: a table of subcommands that also
// generates --help; errors become one message and a documented exit code.
#include "commands.h"
#include "options.h"
#include "output.h"
#include "suggest.h"

#include "tilejit/error.h"
#include "tilejit/runtime/driver.h"
#include "tilejit/version.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <system_error>
#include <unistd.h>
#include <vector>

namespace tilejit::cli {
namespace {

struct Subcommand {
  std::string_view name;
  std::string_view usage;
  std::string_view summary;
  int (*run)(Args);
};

constexpr Subcommand kSubcommands[] = {
    {"list", "list [OP]",
     "list the ops tilejit can compile, with their parameters; with OP, its "
     "tensors, parameters and shape",
     cmd_list},
    {"compile",
     "compile OP [--shape AxB] [--dtype [NAME=]T]... [--set NAME=VALUE]... "
     "[--dump STAGE[,STAGE]|all] [--timings] [--kernel I]",
     "JIT-compile OP for a shape as a call would (same key and options, "
     "stored in the kernel cache) and print a stage (default: ptx); stages: "
     "tile, gpu, mlir, llvm, ptx, sass; --kernel: which of an op's kernels "
     "(default 0)",
     cmd_compile},
    {"run",
     "run OP [--shape AxB] [--dtype [NAME=]T]... [--set NAME=VALUE]... "
     "[--seed N]",
     "run OP on the GPU with seeded inputs (--seed N: the generator's seed, "
     "default 2026) and check it against the CPU reference",
     cmd_run},
    {"bench",
     "bench OP [--shape AxB] [--dtype [NAME=]T]... [--set NAME=VALUE]... "
     "[--seed N] [--iters N]",
     "run, check and time OP; report GB/s against a device-to-device copy",
     cmd_bench},
    {"cache",
     "cache dir|ls|stats|clear|explain OP ...|precompile FILE|bundle "
     "OUT|import FILE",
     "inspect, explain, fill, ship and clear the kernel cache", cmd_cache},
};

void print_help() {
  fmt::print("tilejit {} - JIT compiler of tile kernels for NVIDIA Hopper\n\n"
             "usage: tilejit [--help] [--version] <command> [args]\n\n"
             "commands:\n",
             kVersion);
  for (const Subcommand &s : kSubcommands)
    fmt::print("  {:<9} {}\n", s.name, s.summary);
  fmt::print("\nusage of each command:\n");
  for (const Subcommand &s : kSubcommands)
    fmt::print("  tilejit {}\n", s.usage);
  fmt::print("\nexit codes: 0 ok, 1 user error, 2 internal error, "
             "77 no GPU where one is needed\n");
}

/// `tilejit COMMAND --help`: the command's usage and summary, and with an
/// op (`tilejit run OP --help`) the op's tensors and parameters.
void print_usage(const Subcommand &s, Args rest) {
  fmt::print("usage: tilejit {}\n\n{}\n", s.usage, s.summary);
  if (!rest.empty() && s.name != "cache" && s.name != "list")
    if (const ops::OpDef *op = ops::find_op(rest[0]))
      fmt::print("\n{}", op_help(*op));
}

void print_version() {
  fmt::print("tilejit {}\nLLVM/MLIR {}\n{}\n", kVersion, kLLVMVersion,
             rt::driver_status());
}

int dispatch(int argc, char **argv) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" ||
      args[0] == "help") {
    print_help();
    return args.empty() ? kUserError : kOk;
  }
  if (args[0] == "--version") {
    print_version();
    return kOk;
  }
  std::vector<std::string_view> names;
  for (const Subcommand &s : kSubcommands) {
    names.push_back(s.name);
    if (s.name != args[0])
      continue;
    Args rest = Args(args).subspan(1);
    if (std::find(rest.begin(), rest.end(), "--help") != rest.end() ||
        std::find(rest.begin(), rest.end(), "-h") != rest.end()) {
      print_usage(s, rest);
      return kOk;
    }
    return s.run(rest);
  }
  throw UserError(fmt::format("tilejit: unknown command '{}'{}; 'tilejit "
                              "--help' lists the commands",
                              args[0], did_you_mean(args[0], names)));
}

} // namespace
} // namespace tilejit::cli

namespace tilejit::cli {
namespace {

/// A closed standard descriptor (2>&-) would be reused by the next file
/// tilejit opens, and what tilejit prints would land in it (seen: timing
/// lines in a cache lock file): /dev/null takes its place first.
void reserve_standard_fds() {
  for (int fd = 0; fd <= 2; ++fd)
    if (::fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
      const int null = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
      if (null >= 0 && null != fd) { // lower descriptors were open
        ::dup2(null, fd);
        ::close(null);
      }
    }
}

/// Whether everything printed reached stdout; if not, says so (exit 1: the
/// output asked for is not there), except to a reader that stopped reading
/// (EPIPE: `tilejit list | head`), as other tools do. `err` is the errno of
/// a failed print, when one threw.
bool stdout_written(int err = 0) {
  errno = 0;
  if (std::fflush(stdout) == 0 && !std::ferror(stdout))
    return true;
  if (!err)
    err = errno;
  if (err != EPIPE)
    print_err(fmt::format("tilejit: cannot write to standard output{}{}\n",
                          err ? ": " : "", err ? std::strerror(err) : ""));
  return false;
}

} // namespace
} // namespace tilejit::cli

int main(int argc, char **argv) {
  using namespace tilejit::cli;
  reserve_standard_fds();
  try {
    const int rc = dispatch(argc, argv);
    return stdout_written() ? rc : (rc == kOk ? kUserError : rc);
  } catch (const tilejit::Error &e) {
    (void)stdout_written(); // what was printed before, then the error
    print_err(fmt::format("{}\n", e.what()));
    return e.exit_code();
  } catch (const std::exception &e) {
    // A failed print to stdout: fmt throws a system_error with its errno.
    const auto *failed = dynamic_cast<const std::system_error *>(&e);
    if (!stdout_written(failed ? failed->code().value() : 0))
      return kUserError;
    print_err(fmt::format("tilejit: internal error: {}\n", e.what()));
    return kInternalError;
  }
}
