// sass.cpp - Run ptxas and nvdisasm/cuobjdump on a PTX text.
#include "sass.h"

#include "tilejit/error.h"
#include "tilejit/runtime/scratch_dir.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace tilejit::cli {

static std::string find_tool(const std::string &name) {
  if (const char *path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':'))
      if (!dir.empty() && access((dir + "/" + name).c_str(), X_OK) == 0)
        return dir + "/" + name;
  }
  std::string fallback = "/usr/local/cuda/bin/" + name;
  return access(fallback.c_str(), X_OK) == 0 ? fallback : std::string();
}

/// Runs a shell command, returning its exit status (128 + the signal when
/// killed) and combined output.
static int run(const std::string &command, std::string &output) {
  FILE *pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe)
    return -1;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0)
    output.append(buffer, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

SassResult ptx_to_sass(const std::string &ptx, const std::string &chip) {
  SassResult result;
  std::string ptxas = find_tool("ptxas");
  if (ptxas.empty()) {
    result.text = "sass: ptxas not found on PATH or in /usr/local/cuda/bin; "
                  "install the CUDA toolkit to see SASS";
    return result;
  }
  rt::ScratchDir dir("sass");
  const fs::path ptx_file = dir.write("kernel.ptx", ptx);
  const fs::path cubin = dir.path() / "kernel.cubin";
  std::string out;
  int status = run(fmt::format("'{}' -v -arch={} -o '{}' '{}'", ptxas, chip,
                               cubin.string(), ptx_file.string()),
                   out);
  result.report = out;
  if (status != 0)
    throw InternalError(fmt::format("sass: ptxas '{}' failed on the PTX of "
                                    "this kernel (status {}):\n{}",
                                    ptxas, status, out));
  // ptxas can exit 0 without its output (a TMPDIR that filled up).
  std::error_code ec;
  if (!fs::exists(cubin, ec) || fs::file_size(cubin, ec) == 0 || ec)
    throw UserError(fmt::format("sass: ptxas '{}' wrote no cubin at '{}'; "
                                "requires space in TMPDIR",
                                ptxas, cubin.string()));
  std::string disasm = find_tool("nvdisasm");
  std::string cuobjdump = find_tool("cuobjdump");
  if (disasm.empty() && cuobjdump.empty()) {
    result.text = "sass: neither nvdisasm nor cuobjdump found; install the "
                  "CUDA toolkit to see SASS";
    return result;
  }
  std::string sass;
  std::string command =
      disasm.empty() ? fmt::format("'{}' -sass '{}'", cuobjdump, cubin.string())
                     : fmt::format("'{}' -c '{}'", disasm, cubin.string());
  status = run(command, sass);
  if (status != 0)
    throw InternalError(
        fmt::format("sass: disassembly failed (status {}):\n{}", status, sass));
  result.available = true;
  result.text = sass;
  return result;
}

} // namespace tilejit::cli
