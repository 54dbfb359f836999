// sass.cpp - Run ptxas and nvdisasm/cuobjdump on a PTX text.
#include "sass.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
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

/// Runs a shell command, returning its exit status and combined output.
static int run(const std::string &command, std::string &output) {
  FILE *pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe)
    return -1;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0)
    output.append(buffer, n);
  return pclose(pipe);
}

SassResult ptx_to_sass(const std::string &ptx, const std::string &chip) {
  SassResult result;
  std::string ptxas = find_tool("ptxas");
  if (ptxas.empty()) {
    result.text = "sass: ptxas not found on PATH or in /usr/local/cuda/bin; "
                  "install the CUDA toolkit to see SASS";
    return result;
  }
  fs::path dir = fs::temp_directory_path() /
                 fmt::format("tilejit-sass-{}", static_cast<long>(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "kernel.ptx") << ptx;
  std::string out;
  int status = run(fmt::format("'{}' -v -arch={} -o '{}' '{}'", ptxas, chip,
                               (dir / "kernel.cubin").string(),
                               (dir / "kernel.ptx").string()),
                   out);
  result.report = out;
  if (status != 0) {
    result.text = "sass: ptxas failed:\n" + out;
    fs::remove_all(dir);
    return result;
  }
  std::string disasm = find_tool("nvdisasm");
  std::string cuobjdump = find_tool("cuobjdump");
  if (disasm.empty() && cuobjdump.empty()) {
    result.text = "sass: neither nvdisasm nor cuobjdump found; install the "
                  "CUDA toolkit to see SASS";
    fs::remove_all(dir);
    return result;
  }
  std::string sass;
  std::string command = disasm.empty()
                            ? fmt::format("'{}' -sass '{}'", cuobjdump,
                                          (dir / "kernel.cubin").string())
                            : fmt::format("'{}' -c '{}'", disasm,
                                          (dir / "kernel.cubin").string());
  status = run(command, sass);
  fs::remove_all(dir);
  result.available = status == 0;
  result.text = status == 0 ? sass : "sass: disassembly failed:\n" + sass;
  return result;
}

} // namespace tilejit::cli
