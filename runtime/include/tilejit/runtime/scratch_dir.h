// scratch_dir.h - A private temporary directory for one child tool run
// (ptxas, nvdisasm), named after this process so that the leftovers of a
// process killed in the middle (kill -9) are swept by the next one.
#pragma once

#include <filesystem>
#include <string_view>

namespace tilejit::rt {

/// `$TMPDIR/tilejit-<what>-<pid>-XXXXXX` (or under /tmp), removed with the
/// object. The first one a process makes removes every
/// `tilejit-<what>-<pid>-*` whose process is gone. UserError naming the
/// path and the reason when it cannot be made (a full or read-only TMPDIR).
///
///   ScratchDir dir("ptxas");   // dir.path() / "kernel.ptx"
class ScratchDir {
public:
  explicit ScratchDir(std::string_view what);
  ~ScratchDir();
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;
  const std::filesystem::path &path() const { return path_; }

  /// Writes `bytes` to `name` in the directory; UserError when the write
  /// fails (a full disk), so that no tool runs on a partial file.
  std::filesystem::path write(std::string_view name,
                              std::string_view bytes) const;

private:
  std::filesystem::path path_;
};

/// Removes `tilejit-<what>-<pid>-*` under `dir` whose process is gone
/// (`what` empty: any tool's); returns how many (ScratchDir calls it once a
/// process, for every tool).
int sweep_scratch_dirs(const std::filesystem::path &dir, std::string_view what);

} // namespace tilejit::rt
