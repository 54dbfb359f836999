// ptxas_test.cpp - Finding ptxas, running it, and who makes cubins. A fake
// ptxas (a shell script) stands in for the real one, so every path runs on
// any machine; tests/lit/tools/cache_ptxas.test runs the real one.
#include "tilejit/error.h"
#include "tilejit/runtime/ptxas.h"
#include "tilejit/runtime/scratch_dir.h"

#include <catch2/catch.hpp>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <unistd.h>

using namespace tilejit;
namespace fs = std::filesystem;

namespace {

struct ScratchDir {
  fs::path path;
  ScratchDir() {
    char buf[] = "/tmp/tilejit-ptxas-test-XXXXXX";
    path = mkdtemp(buf);
  }
  ~ScratchDir() { fs::remove_all(path); }
};

/// An executable shell script at dir/name with `body`.
std::string script(const fs::path &dir, const std::string &name,
                   const std::string &body) {
  fs::path p = dir / name;
  std::ofstream(p) << "#!/bin/sh\n" << body;
  fs::permissions(p, fs::perms::owner_all);
  return p.string();
}

/// Sets an environment variable for the scope, restoring it afterwards.
struct EnvVar {
  std::string name;
  std::optional<std::string> saved;
  EnvVar(std::string n, const char *value) : name(std::move(n)) {
    if (const char *old = std::getenv(name.c_str()))
      saved = old;
    if (value)
      setenv(name.c_str(), value, 1);
    else
      unsetenv(name.c_str());
  }
  ~EnvVar() {
    if (saved)
      setenv(name.c_str(), saved->c_str(), 1);
    else
      unsetenv(name.c_str());
  }
};

constexpr const char *kPtx = "//\n// .target sm_80 (a comment)\n.version 8.0\n"
                             ".target sm_90a\n.address_size 64\n";

} // namespace

TEST_CASE("ptx_target reads the .target directive", "[ptxas]") {
  CHECK(rt::ptx_target(kPtx) == "sm_90a");
  CHECK(rt::ptx_target(".version 8.0\n  .target\tsm_90, debug\n") == "sm_90");
  CHECK(rt::ptx_target(".version 8.0\n.targetx sm_90\n") == "");
  CHECK(rt::ptx_target("") == "");
}

TEST_CASE("TILEJIT_PTXAS chooses who makes cubins", "[ptxas]") {
  ScratchDir dir;
  SECTION("0: the driver's linker") {
    EnvVar env("TILEJIT_PTXAS", "0");
    CHECK(!rt::find_ptxas());
    CHECK(rt::cubin_maker() == "driver");
  }
  SECTION("a path: that ptxas") {
    std::string fake = script(dir.path, "ptxas", "exit 0\n");
    EnvVar env("TILEJIT_PTXAS", fake.c_str());
    CHECK(rt::find_ptxas() == fake);
    CHECK(rt::cubin_maker() == "ptxas");
  }
  SECTION("unset: CUDA_HOME/bin comes first") {
    fs::create_directories(dir.path / "bin");
    std::string fake = script(dir.path / "bin", "ptxas", "exit 0\n");
    EnvVar env("TILEJIT_PTXAS", nullptr);
    EnvVar home("CUDA_HOME", dir.path.c_str());
    CHECK(rt::find_ptxas() == fake);
  }
  SECTION("a path that is no executable file: an error naming it") {
    for (std::string bad :
         {(dir.path / "missing").string(), dir.path.string()}) {
      EnvVar env("TILEJIT_PTXAS", bad.c_str());
      std::string msg;
      try {
        rt::find_ptxas();
      } catch (const UserError &e) {
        msg = e.what();
      }
      CHECK(msg == "TILEJIT_PTXAS is '" + bad +
                       "', which is not an executable file; requires the "
                       "path of ptxas, or 0 to make cubins with the driver's "
                       "JIT linker");
    }
  }
}

TEST_CASE("compile_with_ptxas runs ptxas on the PTX's own target", "[ptxas]") {
  ScratchDir dir;
  SECTION("arguments, input and output") {
    // The fake copies its arguments and input to the cubin it writes.
    std::string fake = script(
        dir.path, "ptxas",
        "out=; for a; do [ \"$prev\" = -o ] && out=$a; prev=$a; done\n"
        "{ echo \"$1 $2\"; cat \"$3\"; } > \"$out\"\necho 'info: fine'\n");
    rt::LinkResult r = rt::compile_with_ptxas(fake, kPtx, "k.ptx");
    std::string cubin(r.cubin.begin(), r.cubin.end());
    CHECK(cubin == std::string("-arch=sm_90a -O3\n") + kPtx);
    CHECK(r.info_log == "info: fine\n");
    CHECK(r.maker == "ptxas");
    CHECK(r.wall_ms > 0);
  }
  SECTION("a failing ptxas: its status and output in the error") {
    std::string fake =
        script(dir.path, "ptxas", "echo 'ptxas fatal: bad PTX' >&2\nexit 3\n");
    std::string msg;
    try {
      rt::compile_with_ptxas(fake, kPtx, "k.ptx");
    } catch (const InternalError &e) {
      msg = e.what();
    }
    CHECK(msg == "ptxas '" + fake +
                     "' failed for PTX 'k.ptx' (exit status 3):\nptxas "
                     "fatal: bad PTX\n");
  }
  SECTION("a ptxas that writes nothing") {
    std::string fake = script(dir.path, "ptxas", "exit 0\n");
    CHECK_THROWS_WITH(rt::compile_with_ptxas(fake, kPtx, "k.ptx"),
                      "ptxas '" + fake + "' wrote no cubin for PTX 'k.ptx'");
  }
  SECTION("a ptxas that cannot be started: why, in the error") {
    std::string missing = (dir.path / "nope").string();
    CHECK_THROWS_WITH(rt::compile_with_ptxas(missing, kPtx, "k.ptx"),
                      "ptxas '" + missing +
                          "' failed for PTX 'k.ptx' (could not be started: "
                          "No such file or directory)");
  }
  SECTION("its status collected by another wait (SIGCHLD ignored)") {
    // A host program that reaps children itself (SIG_IGN, or waitpid(-1)
    // in a process pool's thread) takes ptxas's status: the cubin says
    // whether it succeeded.
    struct IgnoreChildren {
      void (*saved)(int) = std::signal(SIGCHLD, SIG_IGN);
      ~IgnoreChildren() { std::signal(SIGCHLD, saved); }
    } ignore;
    std::string writes =
        script(dir.path, "ptxas",
               "out=; for a; do [ \"$prev\" = -o ] && out=$a; prev=$a; done\n"
               "echo cubin > \"$out\"\n");
    rt::LinkResult r = rt::compile_with_ptxas(writes, kPtx, "k.ptx");
    CHECK(std::string(r.cubin.begin(), r.cubin.end()) == "cubin\n");
    std::string fails =
        script(dir.path, "ptxas2", "echo 'ptxas fatal: bad PTX' >&2\nexit 3\n");
    CHECK_THROWS_WITH(rt::compile_with_ptxas(fails, kPtx, "k.ptx"),
                      "ptxas '" + fails +
                          "' failed for PTX 'k.ptx' (its exit status was "
                          "collected by another wait in this process, and it "
                          "wrote no cubin):\nptxas fatal: bad PTX\n");
  }
  SECTION("PTX without a .target") {
    CHECK_THROWS_WITH(
        rt::compile_with_ptxas("/bin/true", ".version 8.0\n", "k.ptx"),
        "ptxas: PTX 'k.ptx' has no .target directive; requires "
        "one (e.g. '.target sm_90a')");
  }
}

TEST_CASE("scratch directories of processes that are gone are swept",
          "[ptxas]") {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() /
                        ("tilejit-sweep-test-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  // A pid no process has (pids stop at 2^22 on Linux).
  long dead = 4194304 + 17;
  REQUIRE(::kill(static_cast<pid_t>(dead), 0) != 0);
  const fs::path gone =
      root / ("tilejit-probe-" + std::to_string(dead) + "-a1b2c3");
  const fs::path mine =
      root / ("tilejit-probe-" + std::to_string(::getpid()) + "-d4e5f6");
  const fs::path other = root / "tilejit-probe-notapid";
  for (const fs::path &d : {gone, mine, other})
    fs::create_directories(d / "x");
  CHECK(rt::sweep_scratch_dirs(root, "probe") == 1);
  CHECK_FALSE(fs::exists(gone));
  CHECK(fs::exists(mine));
  CHECK(fs::exists(other));
  // With no tool named, every tool's: a dead sass directory goes too, a
  // live one and names that are no scratch directory stay.
  const fs::path sass =
      root / ("tilejit-sass-" + std::to_string(dead) + "-g7h8i9");
  const fs::path live =
      root / ("tilejit-ptxas-" + std::to_string(::getpid()) + "-j1k2l3");
  const fs::path odd = root / ("tilejit--" + std::to_string(dead) + "-m4");
  for (const fs::path &d : {sass, live, odd})
    fs::create_directories(d / "x");
  CHECK(rt::sweep_scratch_dirs(root, "") == 1);
  CHECK_FALSE(fs::exists(sass));
  CHECK(fs::exists(live));
  CHECK(fs::exists(odd));
  CHECK(fs::exists(mine));
  fs::remove_all(root);
}

TEST_CASE("a scratch directory names an unusable TMPDIR", "[ptxas][error]") {
  setenv("TMPDIR", "/nonexistent-tilejit-tmp", 1);
  std::string message;
  try {
    rt::ScratchDir dir("probe");
  } catch (const UserError &e) {
    message = e.what();
  }
  unsetenv("TMPDIR");
  CHECK_THAT(message, Catch::Matchers::StartsWith(
                          "cannot create a temporary directory "
                          "'/nonexistent-tilejit-tmp/tilejit-probe-"));
  CHECK_THAT(message, Catch::Matchers::EndsWith(
                          "XXXXXX': No such file or directory; requires a "
                          "writable TMPDIR"));
}
