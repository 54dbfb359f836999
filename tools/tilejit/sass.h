// sass.h - SASS and the ptxas resource report, through the CUDA toolkit's
// ptxas and nvdisasm/cuobjdump when they are installed.
#pragma once

#include <string>

namespace tilejit::cli {

struct SassResult {
  bool available = false; ///< false: `text` is the one-line reason
  std::string text;       ///< SASS, or why there is none
  std::string report;     ///< ptxas -v: registers, shared memory, spills
};

/// Assembles `ptx` for `chip` with ptxas (PATH, then /usr/local/cuda/bin)
/// and disassembles the cubin. UserError when TMPDIR cannot take the PTX;
/// InternalError when ptxas or the disassembler fails (exit 2, not 0).
SassResult ptx_to_sass(const std::string &ptx, const std::string &chip);

} // namespace tilejit::cli
